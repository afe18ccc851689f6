"""The universe report (domains/README.md, domains/universe.svg) is generated, never hand-written."""

from __future__ import annotations

import json
import shutil

from pipeline.universe_report import DOMAINS, bundled_domains, domain_row, write


def test_the_committed_report_and_picture_are_what_the_command_writes(tmp_path):
    written = write(DOMAINS, tmp_path)
    for path in written:
        assert path.read_bytes() == (DOMAINS / path.name).read_bytes(), (
            f"domains/{path.name} is stale: run `python -m pipeline.universe_report`")
    again = write(DOMAINS, tmp_path / "again")  # no date, a fixed hash salt: the same bytes
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in written]


def test_every_domain_folder_is_a_row_with_its_own_figures(tmp_path):
    root = tmp_path / "domains"
    shutil.copytree(DOMAINS / "job_seeking", root / "job_seeking", ignore=shutil.ignore_patterns("tests", "rollouts"))
    (root / "notes").mkdir()  # a folder without spec.json and tools.py is no domain
    twin = root / "job_seeking_lite"
    shutil.copytree(root / "job_seeking", twin)
    report = json.loads((twin / "report.json").read_text())
    report["tools"]["verified"] = report["tools"]["verified"][:30]
    report["graph"]["density"] = 0.05
    (twin / "report.json").write_text(json.dumps(report))
    index = json.loads((twin / "tasks" / "index.json").read_text())
    index["summary"].update(built=6, kinds={"answer": 2, "change": 3, "refusal": 1}, levels={"1": 6})
    (twin / "tasks" / "index.json").write_text(json.dumps(index))
    (twin / "README.md").write_text("# lite\n\nBuilt on 2026-01-05 with a model.\n")
    assert [p.name for p in bundled_domains(root)] == ["job_seeking", "job_seeking_lite"]
    row = domain_row(twin)
    assert (row["tools"], row["density"], row["date"], row["models"]) == (30, 0.05, "2026-01-05", ["authored"])
    assert row["tokens_per_tool"] == round(report["tokens"]["total"]["total"] / 30)
    readme, svg = write(root)
    text = readme.read_text()
    assert "| [job_seeking_lite](job_seeking_lite/README.md) | 30 | 8 |" in text
    assert "answer: 2, change: 3, refusal: 1" in text and "authored (2026-01-05)" in text
    assert "| **total** | 78 | 16 |" in text and "2 domains, 78 verified tools" in text
    assert svg.read_text().count("job_seeking") >= 2 and "<dc:date>" not in svg.read_text()
