"""Writers for export files: JSON, JSONL and parquet.

Parquet needs pyarrow, a trainer-side library the core does not install: when this interpreter
has no pyarrow, the rows go through `.venv-trainers/bin/python` (or WORLDSMITH_TRAINERS_PYTHON)
running parquet_file.py, so `make export` works from the core environment.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from export.source import ExportError

ROOT = Path(__file__).resolve().parents[1]
_PARQUET_SCRIPT = Path(__file__).with_name("parquet_file.py")


def dumps(value) -> str:
    """Canonical JSON for values stored as strings (stable bytes across runs)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def write_json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def trainers_python() -> Path:
    return Path(os.environ.get("WORLDSMITH_TRAINERS_PYTHON", ROOT / ".venv-trainers" / "bin" / "python"))


def write_parquet(path: Path, jsonl: Path) -> Path:
    """`path` as parquet holding the rows of the JSONL file `jsonl`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import pyarrow  # noqa: F401  (a trainers' environment, or a core one that has it)
    except ImportError:
        python = trainers_python()
        if not python.is_file():
            raise ExportError(f"parquet needs pyarrow, which the core environment does not install; "
                              f"run `make trainers-env` (expected {python})") from None
        done = subprocess.run([str(python), str(_PARQUET_SCRIPT), str(jsonl), str(path)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ExportError(f"writing {path} failed: {done.stderr.strip()[-2000:]}") from None
        return path
    from export.parquet_file import convert

    convert(jsonl, path)
    return path
