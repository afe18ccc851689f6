"""Every bundled job_seeking task over MCP stdio: reward below 1 untouched, exactly 1 after the reference solution."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "domains" / "job_seeking" / "tasks"


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(600)  # every bundled task through one stdio server: over 3 minutes on a loaded machine
async def test_every_bundled_task_earns_reward_1_only_after_its_reference_solution():
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=dict(os.environ),
                                   args=[str(ROOT / "tests" / "support" / "tasks_stdio_server.py"), "job_seeking"])
    files = sorted(TASKS.glob("task_*.json"))
    assert len(files) >= 40
    async with Client(params) as client:
        for path in files:
            task = json.loads(path.read_text())
            await client.read_resource(f"select://{task['id']}")
            before = json.loads((await client.read_resource("episode://reward")).contents[0].text)
            assert before["reward"] < 1.0, task["id"]
            for call in task["reference_solution"]:
                result = await client.call_tool(call["tool"], call["arguments"])
                assert not result.is_error, (task["id"], call, result.content)
            after = json.loads((await client.read_resource("episode://reward")).contents[0].text)
            assert after["reward"] == 1.0, (task["id"], after)
