"""SkyRL rows: data/train.parquet with {data_source, prompt, env_class, reward_spec, extra_info}.

SkyRL's generator makes `skyrl_gym.make(env_class, env_config=..., extras=row)` per rollout;
an environment registered as "worldsmith" reads the task and server from `extra_info` and opens
its own episode (POST {base_url}/episodes with the task id). The reward side is
`reward_spec{method, ground_truth}`; `prompt` and `extra_info` hold no answer.
"""

from __future__ import annotations

from pathlib import Path

from export.files import write_jsonl, write_parquet
from export.source import DomainSource
from export.verl import binding, ground_truth

ENV_CLASS = "worldsmith"


def row(source: DomainSource, task, index: int, base_url: str, split: str = "train") -> dict:
    return {
        "data_source": source.data_source,
        "prompt": source.prompt(task),
        "env_class": ENV_CLASS,
        "reward_spec": {"method": "rule", "ground_truth": ground_truth(source, task)},
        "extra_info": {"split": split, "index": index, **binding(source, task, base_url)},
    }


def export(source: DomainSource, out: Path, base_url: str, **_options) -> list[Path]:
    rows = [row(source, task, i, base_url) for i, task in enumerate(source.tasks)]
    jsonl = write_jsonl(out / "data" / "train.jsonl", rows)
    return [write_parquet(out / "data" / "train.parquet", jsonl), jsonl]
