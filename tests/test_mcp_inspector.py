"""The MCP Inspector CLI (the reference client) lists and calls the domain's tools over stdio.

Needs node and npm; the Inspector is installed on first use into .npm-tools/ (gitignored).
Without node, or when the package cannot be installed, the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from filelock import FileLock

from tests.support.fixture_domain import ROOT

NPM_TOOLS = ROOT / ".npm-tools"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="module")
def inspector():
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed to run the MCP Inspector")
    binary = NPM_TOOLS / "node_modules" / ".bin" / "mcp-inspector"
    NPM_TOOLS.mkdir(exist_ok=True)
    with FileLock(str(NPM_TOOLS / "install.lock")):
        if not binary.exists():
            try:
                done = subprocess.run(["npm", "install", "--prefix", str(NPM_TOOLS), "--no-audit", "--no-fund",
                                       "--loglevel=error", INSPECTOR], capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                pytest.skip(f"npm install {INSPECTOR} took too long")
            if done.returncode != 0 or not binary.exists():
                pytest.skip(f"npm install {INSPECTOR} failed: {done.stderr.strip()[-500:]}")
    return binary


def run_inspector(binary, domain, tmp_path, *method: str) -> tuple[int, dict]:
    command = [str(binary), "--cli", sys.executable, "-m", "mcp_servers", str(domain), "--task", "finish_dune",
               *method]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"the Inspector printed no JSON (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-2000:]}")


def test_inspector_lists_tools_with_schemas_and_annotations(inspector, fixture_domain, tmp_path):
    code, listed = run_inspector(inspector, fixture_domain, tmp_path, "--method", "tools/list")
    assert code == 0
    tools = {t["name"]: t for t in listed["tools"]}
    assert sorted(tools) == ["add_book", "add_then_fail", "add_then_hang", "add_then_stall", "export_list",
                             "get_book", "mark_read", "remove_book"]
    assert tools["add_book"]["inputSchema"]["properties"]["author"] == {"type": "string", "description": "Author name"}
    assert tools["get_book"]["annotations"]["readOnlyHint"] is True
    assert tools["remove_book"]["annotations"]["destructiveHint"] is True


def test_inspector_calls_a_tool_and_sees_tool_errors(inspector, fixture_domain, tmp_path):
    code, called = run_inspector(inspector, fixture_domain, tmp_path, "--method", "tools/call",
                                 "--tool-name", "mark_read", "--tool-arg", "book_id=BK-0001")
    assert code == 0 and called["isError"] is False
    assert called["structuredContent"] == {"book_id": "BK-0001", "status": "read"}
    code, failed = run_inspector(inspector, fixture_domain, tmp_path, "--method", "tools/call",
                                 "--tool-name", "get_book", "--tool-arg", "book_id=BK-0404")
    assert failed["isError"] is True
    assert failed["content"][0]["text"] == "Error (NotFound): book 'BK-0404' does not exist"
