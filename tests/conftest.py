"""Fixtures shared by the test modules; reusable test code (local model endpoints, scripted
domains, trainer probes) lives in tests/support/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from filelock import FileLock

from mcp_servers.runtime import Environment
from tests.support.fixture_domain import build_fixture_domain
from tests.support.rollouts_tasks import CONVERSATIONAL, TASKS, write_domain


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


@pytest.fixture(scope="module")
def conversational_env(tmp_path_factory):
    """The scripted rollouts domain with CONVERSATIONAL marked conversational, in process."""
    tasks = {**TASKS, CONVERSATIONAL: {**TASKS[CONVERSATIONAL], "mode": "conversational"}}
    with Environment(write_domain(tmp_path_factory.mktemp("user_api"), tasks), workers=1) as environment:
        yield environment
