"""Every bundled job_seeking task over MCP stdio, both ways, by its kind: a change task earns below 1
untouched and exactly 1 after its reference solution; an answer task earns 1 only when the final
message states its facts after its reference reads; a refusal task earns 1 untouched and after its
reference look-ups, and below 1 once the forbidden call is made.

This is the one test that plays every bundled task; adapter and export tests play a sample."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from mcp import Client, StdioServerParameters

from domains.task_model import task_ids
from tests.support.task_sample import bundled_count, final_message, forbidden_call

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"


async def reward(client: Client, final: str | None = None) -> float:
    uri = "episode://reward" + (f"?final_message={quote(final, safe='')}" if final is not None else "")
    return json.loads((await client.read_resource(uri)).contents[0].text)["reward"]


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(900)  # every bundled task through one stdio server: it grows with the bundle
async def test_every_bundled_task_earns_reward_1_only_by_its_kinds_outcome():
    # PYTHONPATH: the server imports this checkout, whatever the environment has installed
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)},
                                   args=[str(ROOT / "tests" / "support" / "tasks_stdio_server.py"), "job_seeking"])
    ids = task_ids(DOMAIN)
    assert len(ids) == bundled_count(DOMAIN)
    played = {"change": 0, "answer": 0, "refusal": 0}
    async with Client(params) as client:
        for task_id in ids:
            task = json.loads((DOMAIN / "tasks" / f"{task_id}.json").read_text())
            kind = task.get("kind", "change")
            await client.read_resource(f"select://{task_id}")
            before = await reward(client)
            assert (before == 1.0) if kind == "refusal" else (before < 1.0), (task_id, before)
            for call in task["reference_solution"]:
                result = await client.call_tool(call["tool"], call["arguments"])
                assert not result.is_error, (task_id, call, result.content)
            if kind == "answer":
                assert await reward(client, "Done.") < 1.0, task_id  # the reads alone say nothing
            assert await reward(client, final_message(task)) == 1.0, task_id
            if kind == "refusal":
                forbidden = forbidden_call(task)
                await client.call_tool(forbidden["tool"], forbidden["arguments"])  # refused by the tool
                assert await reward(client) < 1.0, task_id
            played[kind] += 1
    assert all(played.values()), played
