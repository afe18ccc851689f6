"""JSONL to parquet with pyarrow; runs as a script under the trainers' interpreter.

Imports nothing from the project, so `.venv-trainers/bin/python export/parquet_file.py IN OUT`
works without the core's dependencies.
"""

import json
import sys


def convert(src, dst) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with open(src, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    pq.write_table(pa.Table.from_pylist(rows), str(dst))


if __name__ == "__main__":
    convert(sys.argv[1], sys.argv[2])
