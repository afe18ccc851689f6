"""SkyRL rows: data/train.parquet with {data_source, prompt, env_class, reward_spec, extra_info}.

SkyRL's generator makes `skyrl_gym.make(env_class, env_config=..., extras=row)` per rollout;
an environment registered as "worldsmith" reads the task and server from `extra_info` and opens
its own episode (POST {base_url}/episodes with the task id). The reward side is
`reward_spec{method, ground_truth}`; `prompt` and `extra_info` hold no answer. The rows are
built by export/episode_rows.py.
"""

from __future__ import annotations

from pathlib import Path

from export.episode_rows import episode_rows, write_rows
from export.source import DomainSource

ENV_CLASS = "worldsmith"


def rows(source: DomainSource, base_url: str) -> list[dict]:
    return episode_rows(source, base_url, runner={"env_class": ENV_CLASS}, reward=("reward_spec", "method"),
                        extra_info=lambda bound: bound)


def export(source: DomainSource, out: Path, base_url: str, **_options) -> list[Path]:
    return write_rows(out, rows(source, base_url))
