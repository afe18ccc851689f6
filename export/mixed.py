"""Several domains as one dataset: rows of every domain with `domain` as a column, split by domain.

The row formats (hf, verl, skyrl) write data/train.{parquet,jsonl} with the training domains' rows
and, when domains are held out, data/test.{parquet,jsonl} with theirs; each row keeps what its
single-domain export holds (its own tools, policy and server binding) plus `domain`, and
`extra_info.split` and `extra_info.index` count within its split. hf adds a dataset card with
both splits, tools.json as {domain: tools} and policies/<domain>.md. The folder formats (tau2,
awm: one domain each by design) write one folder per domain, <format>/<domain>/, and
splits.json says which domains are train and which test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from export import hf, skyrl, verl
from export.episode_rows import write_rows
from export.files import write_json
from export.source import DomainSource

ROWS: dict[str, Callable[[DomainSource, str], list[dict]]] = {"hf": hf.rows, "verl": verl.rows, "skyrl": skyrl.rows}

CARD = """---
configs:
- config_name: default
  data_files:
{splits}
---
# worldsmith tasks of {count} domains

{table}

Each row is one task, with the columns of a single domain's export (its prompt, tools, policy and
reward fields) and `domain`. The splits are by domain: the test split holds only the held-out
domains' tasks.
"""


def export_mixed(fmt: str, splits: dict[str, list[DomainSource]], out: Path, base_url: str,
                 writer: Callable[..., list[Path]]) -> list[Path]:
    """`splits`: split name -> its domains. `writer`: the format's single-domain writer, for the
    folder formats."""
    if fmt not in ROWS:
        written = [write_json(out / "splits.json", {split: [s.name for s in sources]
                                                    for split, sources in splits.items()})]
        for sources in splits.values():
            for source in sources:
                written += writer(source, out / source.name, base_url=base_url)
        return written
    written = []
    # one schema for every row: the kind columns everywhere when any domain has a non-change task
    kinds = any(hf.has_kinds(s) for sources in splits.values() for s in sources)
    for split, sources in splits.items():
        rows = []
        for source in sources:
            table = hf.rows(source, base_url, kinds) if fmt == "hf" else ROWS[fmt](source, base_url)
            rows += [{**row, "domain": source.name} for row in table]
        for index, row in enumerate(rows):
            if "extra_info" in row:
                row["extra_info"] = {**row["extra_info"], "split": split, "index": index}
        written += write_rows(out, rows, split)
    if fmt == "hf":
        written += _hf_files(splits, out)
    return written


def _hf_files(splits: dict[str, list[DomainSource]], out: Path) -> list[Path]:
    sources = [s for group in splits.values() for s in group]
    card = out / "README.md"
    card.write_text(CARD.format(
        count=len(sources),
        splits="\n".join(f"  - split: {split}\n    path: data/{split}.parquet" for split in splits),
        table="\n".join(["| domain | split | tasks | tools |", "| --- | --- | --- | --- |"]
                        + [f"| {s.name} | {split} | {len(s.tasks)} | {len(s.tools)} |"
                           for split, group in splits.items() for s in group])))
    policies = []
    for source in sources:
        path = out / "policies" / f"{source.name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source.policy)
        policies.append(path)
    return [card, *policies, write_json(out / "tools.json", {s.name: s.tools for s in sources})]
