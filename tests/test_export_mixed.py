"""Exports of several domains as one dataset, split by domain: a held-out domain's tasks are the
test rows and no other's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.domain_copies import domains_root, root_env
from tests.test_export import in_trainers, jsonl, needs_trainers

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.integration


def export(root: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "export", *args, "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **root_env(root)})


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return domains_root(tmp_path_factory.mktemp("domains"), ["job_seeking", "pet_care"], tasks=3)


@pytest.fixture(scope="module")
def held_out(root, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exports") / "mixed"
    done = export(root, out, "job_seeking,pet_care", "--holdout", "pet_care", "--format", "all")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("fmt", ["hf", "verl", "skyrl"])
def test_train_rows_come_only_from_the_others_and_test_rows_only_from_the_held_out(held_out, fmt):
    train, test = jsonl(held_out / fmt / "data" / "train.jsonl"), jsonl(held_out / fmt / "data" / "test.jsonl")
    assert [r["domain"] for r in train] == ["job_seeking"] * 3
    assert [r["domain"] for r in test] == ["pet_care"] * 3
    if fmt != "hf":  # the row's own binding: the held-out domain's episodes, counted within its split
        assert {r["extra_info"]["split"] for r in test} == {"test"}
        assert [r["extra_info"]["index"] for r in test] == [0, 1, 2]
        bound = [r["extra_info"]["interaction_kwargs"] if fmt == "verl" else r["extra_info"] for r in test]
        assert {b["domain"] for b in bound} == {"pet_care"}
    assert (held_out / fmt / "data" / "test.parquet").is_file()


def test_folder_formats_keep_one_folder_per_domain_and_say_the_split(held_out):
    for fmt in ("tau2", "awm"):
        assert json.loads((held_out / fmt / "splits.json").read_text()) == {"train": ["job_seeking"],
                                                                           "test": ["pet_care"]}
        assert (held_out / fmt / "pet_care").is_dir() and (held_out / fmt / "job_seeking").is_dir()
    tau2 = json.loads((held_out / "tau2" / "pet_care" / "tasks.json").read_text())
    assert len(tau2) == 3


@needs_trainers
def test_the_hf_dataset_loads_both_splits_with_datasets(held_out, tmp_path):
    sizes = in_trainers(f"""
        import json
        from datasets import load_dataset
        data = load_dataset({str(held_out / "hf")!r})
        print(json.dumps({{split: sorted(set(data[split]["domain"])) for split in data}}))
    """, tmp_path)
    assert sizes == {"train": ["job_seeking"], "test": ["pet_care"]}


def test_holding_out_a_set_says_what_moved_and_bad_names_keep_earlier_exports(root, held_out, tmp_path):
    moved = export(root, tmp_path / "sets", "set_a", "--holdout", "set_b", "--format", "hf")
    assert moved.returncode == 2  # set_a's other domains are not built in this root
    assert "job_seeking is in set_a and also held out" in moved.stderr and "no domain" in moved.stderr
    before = (held_out / "hf" / "data" / "train.jsonl").read_bytes()
    bad = export(root, held_out, "job_seeking,no_such_domain", "--format", "hf")
    assert bad.returncode == 2 and "no domain 'no_such_domain'" in bad.stderr
    assert (held_out / "hf" / "data" / "train.jsonl").read_bytes() == before
