"""Time `python -m export` on job_seeking's tasks: each format, and all five in one process.

Each figure is the median of 3 runs, whole process (interpreter start, imports, the domain read,
the writers; parquet through .venv-trainers' pyarrow; AWM runs every reference solution).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from export import FORMATS
from export.source import read_domain

ROOT = Path(__file__).resolve().parents[1]


def _seconds(fmt: str, out: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "export", "job_seeking", "--format", fmt, "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    tasks = len(read_domain("job_seeking").tasks)
    with tempfile.TemporaryDirectory() as scratch:
        for fmt in [*FORMATS, "all"]:
            runs = [_seconds(fmt, Path(scratch)) for _ in range(3)]
            size = sum(p.stat().st_size for p in Path(scratch).rglob("*") if p.is_file() and
                       (fmt == "all" or p.relative_to(scratch).parts[0] == fmt))
            print(f"export {fmt:5s} job_seeking ({tasks} tasks): {statistics.median(runs):.2f} s median of 3 "
                  f"(min {min(runs):.2f}), {size / 1e6:.1f} MB", flush=True)


if __name__ == "__main__":
    main()
