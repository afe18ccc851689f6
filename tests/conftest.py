"""Fixtures shared by the test modules; reusable test code (local model endpoints, scripted
domains, trainer probes) lives in tests/support/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.fixture_domain import build_fixture_domain


@pytest.fixture(scope="session")
def fixture_domain(tmp_path_factory) -> Path:
    """The verified reading-list domain of tests/support/fixture_domain.py, built once per run:
    every module and every xdist worker shares one build (a fresh one each run)."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "mcp_fixture"
    with FileLock(str(shared) + ".lock"):
        if not (shared / "ready").exists():
            build_fixture_domain(shared)
    return shared / "reading_list"
