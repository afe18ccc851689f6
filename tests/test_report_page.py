"""The domain report page: what report.json says, as a page and a picture, rewritten with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from domains.report_page import PICTURE, write_report_page

DOMAIN = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "job_seeking"
    out.mkdir()
    for name in ("report.json", "spec.json"):
        shutil.copy(DOMAIN / name, out / name)
    shutil.copytree(DOMAIN / "tests", out / "tests", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return out


def test_the_page_shows_every_tools_mutation_score_and_the_domains(tmp_path):
    out = _copy(tmp_path)
    write_report_page(out)
    page = (out / "report.md").read_text()
    report = json.loads((out / "report.json").read_text())
    mutation = report["mutation"]
    assert f"| mutation score | {mutation['score']:.3f} over {mutation['mutants']:,} non-equivalent mutants" in page
    for name, record in mutation["tools"].items():
        cases = len(json.loads((out / "tests" / f"{name}.json").read_text()))
        assert f"| {name} | {cases} | {record['mutants']} | " in page
        assert f"| {record['score']:.3f} | " in page
    assert f"![mutation score per tool]({PICTURE})" in page
    svg = (out / PICTURE).read_text()
    assert svg.startswith("<?xml") and all(name in svg for name in mutation["tools"])
    write_report_page(out)
    assert (out / "report.md").read_text() == page and (out / PICTURE).read_text() == svg  # same bytes again


def test_a_report_without_the_gate_has_no_picture(tmp_path):
    out = _copy(tmp_path)
    report = json.loads((out / "report.json").read_text())
    del report["mutation"]
    (out / "report.json").write_text(json.dumps(report))
    (out / PICTURE).write_text("stale")
    write_report_page(out)
    page = (out / "report.md").read_text()
    assert "| mutation score |" not in page and PICTURE not in page
    assert not (out / PICTURE).exists()


def test_the_bundled_page_is_the_page_of_the_bundled_report(tmp_path):
    out = _copy(tmp_path)
    write_report_page(out)
    assert (out / "report.md").read_text() == (DOMAIN / "report.md").read_text()
    assert (out / PICTURE).read_text() == (DOMAIN / PICTURE).read_text()
