"""A Hugging Face `datasets` dataset of the domain's tasks: data/train.parquet and data/train.jsonl.

One row per task. Nested values whose keys differ from task to task (states, arguments, the
reward spec, the tools) are JSON strings, so parquet does not widen them into sparse structs;
`prompt` is a list of chat messages. The dataset card's `configs` make
`datasets.load_dataset(<folder>)` read the parquet file; the JSONL file loads with
`load_dataset("json", data_files=...)`.
"""

from __future__ import annotations

from pathlib import Path

from export.files import dumps, write_json, write_jsonl, write_parquet
from export.source import DomainSource, answer_side

CARD = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train.parquet
---
# {name}: worldsmith tasks

{description}

{count} verifiable tasks over {tools} verified tools. Each row: `prompt` (the system message and
the user's request, as the agent first sees them), `tools` (OpenAI function schemas, JSON), `policy`,
`user_profile` (for a simulated user, JSON), and for the reward side only: `initial_state`,
`reference_solution`, `reward_spec` (JSON). Replaying `reference_solution` on `initial_state` gives
the ground-truth state; the reward compares an episode's final state with it under `reward_spec`'s
field policies (exempt, hard, semantic). Where the domain has answer or refusal tasks, `kind`
(change, answer, refusal), `facts` (what an answer's final message must state) and `policy_rule`
(the rule a refusal task's request breaks and the call it forbids) are columns too.

```python
from datasets import load_dataset
tasks = load_dataset("path/to/this/folder", split="train")                       # parquet
same = load_dataset("json", data_files="path/to/this/folder/data/train.jsonl", split="train")
```
"""


def row(source: DomainSource, task) -> dict:
    return {
        "id": task.id,
        "domain": source.name,
        "instruction": task.instruction,
        "prompt": source.prompt(task),
        "tools": dumps(source.tools),
        "policy": source.policy,
        "user_profile": dumps(task.user_profile),
        "initial_state": dumps(source.full_state(task.initial_state)),
        "now": task.now,
        "reference_solution": dumps([call.model_dump() for call in task.reference_solution]),
        "reward_spec": dumps(task.reward_spec),
        "complexity_level": task.metadata.complexity_level if task.metadata else None,
        "metadata": dumps(task.metadata.model_dump() if task.metadata else None),
    }


def kind_columns(task) -> dict:
    """`kind`, and `facts` and `policy_rule` as JSON (null where the kind has none)."""
    side = answer_side(task)
    return {"kind": task.kind, "facts": dumps(side.get("facts")), "policy_rule": dumps(side.get("policy_rule"))}


def has_kinds(source: DomainSource) -> bool:
    return any(task.kind != "change" for task in source.tasks)


def rows(source: DomainSource, _base_url: str = "", kinds: bool | None = None) -> list[dict]:
    # Every row has the kind columns when any task is not a change task (parquet reads one schema).
    kinds = has_kinds(source) if kinds is None else kinds
    return [{**row(source, task), **(kind_columns(task) if kinds else {})} for task in source.tasks]


def export(source: DomainSource, out: Path, **_options) -> list[Path]:
    table = rows(source)
    jsonl = write_jsonl(out / "data" / "train.jsonl", table)
    card = out / "README.md"
    card.write_text(CARD.format(name=source.name, description=source.spec.description, count=len(table),
                                tools=len(source.tools)))
    policy = out / "policy.md"
    policy.write_text(source.policy)
    return [write_parquet(out / "data" / "train.parquet", jsonl), jsonl, card, policy,
            write_json(out / "tools.json", source.tools)]
