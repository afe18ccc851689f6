"""Real MCP clients against the domain server: fastmcp in memory, the mcp SDK over stdio and HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest
from fastmcp import Client as FastMCPClient
from mcp import Client, StdioServerParameters

from mcp_servers.runtime import Environment
from mcp_servers.server import build_server
from tests.support.fixture_domain import DUNE, EMMA, ROOT
from tests.support.fixture_domain import http_server as start_http_server

TOOLS = ["add_book", "add_then_fail", "add_then_hang", "add_then_stall", "export_list", "get_book", "mark_read",
         "remove_book"]
RESOURCES = ["episode://info", "episode://reward", "episode://state", "episode://task"]
SOLUTION = [("mark_read", {"book_id": "BK-0001"}),
            ("add_book", {"title": "Persuasion", "author": "Jane Austen", "pages": 320})]


def text(result) -> str:
    return result.content[0].text


# -- fastmcp, in memory -------------------------------------------------------------------

@pytest.fixture(scope="module")
def env(fixture_domain):
    with Environment(fixture_domain, call_timeout=0.5) as environment:
        yield environment


async def test_fastmcp_client_sees_typed_annotated_tools_and_no_trainer_tools(env):
    episode = env.create_episode("finish_dune")
    async with FastMCPClient(build_server(env, lambda: episode)) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert sorted(tools) == TOOLS
        add = tools["add_book"]
        assert add.description == "Add a book to the reading list."
        assert add.input_schema["properties"]["title"] == {"type": "string", "description": "Book title"}
        assert add.input_schema["required"] == ["title", "author"]
        assert add.annotations.read_only_hint is False and add.annotations.destructive_hint is False
        assert tools["get_book"].annotations.read_only_hint is True
        assert tools["remove_book"].annotations.destructive_hint is True
        # the schema calls mark_read not destructive; its verified tests show it overwriting a row
        assert tools["mark_read"].annotations.destructive_hint is True
        assert await client.list_resources() == []  # the trainer's data is not on the agent's server
    episode.close()


async def test_fastmcp_client_calls_tools_and_reads_the_trainer_resources_when_exposed(env):
    episode = env.create_episode("finish_dune")
    async with FastMCPClient(build_server(env, lambda: episode, expose_trainer_resources=True)) as client:
        assert sorted(str(r.uri) for r in await client.list_resources()) == RESOURCES
        before = json.loads((await client.read_resource("episode://reward"))[0].text)
        assert before["reward"] < 1.0
        for tool, arguments in SOLUTION:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error
        assert result.structured_content == {"book_id": "BK-0003"}
        reward = json.loads((await client.read_resource("episode://reward"))[0].text)
        assert reward["reward"] == 1.0 and reward["passed"] is True
        state = json.loads((await client.read_resource("episode://state"))[0].text)
        assert [b["title"] for b in state["book"]] == ["Dune", "Emma", "Persuasion"]
        task = json.loads((await client.read_resource("episode://task"))[0].text)
        assert task["reference_solution"][0]["tool"] == "mark_read"
        info = json.loads((await client.read_resource("episode://info"))[0].text)
        assert info["calls"] == 2 and info["task_id"] == "finish_dune"
    episode.close()


async def test_fastmcp_client_gets_tool_errors_and_the_state_is_kept(env):
    episode = env.create_episode("finish_dune")
    async with FastMCPClient(build_server(env, lambda: episode)) as client:
        failures = {
            ("add_then_fail", '{"title": "x"}'): "Error (InvalidInput): refused after writing",
            ("add_then_hang", '{"title": "x"}'): "Error (Timeout): the tool ran longer than 0.5 s",
            ("get_book", '{"book_id": "BK-0404"}'): "Error (NotFound): book 'BK-0404' does not exist",
            ("get_book", '{"book_id": 7}'): "argument 'book_id' must be a string, got an integer",
            ("get_book", "{}"): "missing required argument 'book_id'",
            ("no_such_tool", "{}"): "Unknown tool: 'no_such_tool'",
        }
        for (tool, arguments), message in failures.items():
            result = await client.call_tool(tool, json.loads(arguments), raise_on_error=False)
            assert result.is_error, tool
            assert message in text(result), text(result)
        huge = await client.call_tool("add_book", {"title": "x" * (1 << 20), "author": "A"}, raise_on_error=False)
        assert huge.is_error and "is too long: 1,048,576 characters" in text(huge)
        assert episode.state() == {"book": [DUNE, EMMA]}
    episode.close()


async def test_fastmcp_client_on_a_sample_episode_gets_no_reward(env):
    episode = env.create_episode()
    async with FastMCPClient(build_server(env, lambda: episode, expose_trainer_resources=True)) as client:
        with pytest.raises(Exception, match="sample state"):
            await client.read_resource("episode://reward")
    episode.close()


# -- the mcp SDK over stdio ---------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.integration
async def test_mcp_sdk_over_stdio_serves_one_episode(fixture_domain):
    params = StdioServerParameters(  # resources exposed, for the reward check at the end
        command=sys.executable, cwd=str(ROOT), env=dict(os.environ),
        args=["-m", "mcp_servers", str(fixture_domain), "--task", "finish_dune", "--call-timeout", "0.5",
              "--expose-trainer-resources"])
    async with Client(params) as client:
        listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) == TOOLS
        assert next(t for t in listed.tools if t.name == "mark_read").input_schema["properties"]["book_id"] == {
            "type": "string", "description": "Book id"}
        bad = await client.call_tool("add_book", {"title": ["not", "a", "string"], "author": "A"})
        assert bad.is_error and "argument 'title' must be a string, got an array" in text(bad)
        hung = await client.call_tool("add_then_hang", {"title": "x"})
        assert hung.is_error and "Timeout" in text(hung)
        for tool, arguments in SOLUTION:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, text(result)
        reward = await client.read_resource("episode://reward")
        assert json.loads(reward.contents[0].text)["reward"] == 1.0


@pytest.mark.integration
def test_the_cli_refuses_unknown_domains_and_tasks(fixture_domain):
    for args, message in [(["no_such_domain"], "no domain 'no_such_domain'"),
                          ([str(fixture_domain), "--task", "nope"], "has no task 'nope'")]:
        done = subprocess.run([sys.executable, "-m", "mcp_servers", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2
        assert message in done.stderr
        assert done.stdout == ""


# -- the mcp SDK over streamable HTTP -----------------------------------------------------

@pytest.fixture(scope="module")
def http_server(fixture_domain):
    with start_http_server(fixture_domain, "--call-timeout", "0.5") as served:
        yield served


@pytest.mark.integration
def test_control_api_creates_inspects_resets_and_closes_episodes(http_server):
    api = httpx.Client(base_url=http_server.url, headers=http_server.headers, timeout=60)
    assert api.get("/health").json()["tools"] == len(TOOLS)
    assert [t["function"]["name"] for t in api.get("/tools").json()] == TOOLS
    assert api.get("/tasks").json() == {"tasks": ["broken_reference", "finish_dune"]}
    created = api.post("/episodes", json={"task_id": "finish_dune"})
    assert created.status_code == 201
    episode = created.json()
    eid = episode["episode_id"]
    assert episode["mcp_url"] == f"{http_server.url}/episodes/{eid}/mcp"
    assert episode["instruction"].startswith("Mark Dune as read")
    assert api.get(f"/episodes/{eid}/task").json()["reference_solution"][1]["tool"] == "add_book"
    assert api.get(f"/episodes/{eid}").json()["task_id"] == "finish_dune"
    assert eid in [e["episode_id"] for e in api.get("/episodes").json()["episodes"]]
    assert api.get(f"/episodes/{eid}/state").json() == {"book": [DUNE, EMMA]}
    assert api.get(f"/episodes/{eid}/reward").json()["reward"] == 0.0
    assert api.post(f"/episodes/{eid}/reset").json()["calls"] == 0
    assert api.delete(f"/episodes/{eid}").json() == {"episode_id": eid, "closed": True}
    assert api.get(f"/episodes/{eid}").status_code == 404

    sample = api.post("/episodes").json()
    assert "instruction" not in sample
    assert api.get(f"/episodes/{sample['episode_id']}/task").status_code == 404
    refused = api.get(f"/episodes/{sample['episode_id']}/reward")
    assert refused.status_code == 409 and "sample state" in refused.json()["error"]
    assert api.post("/episodes", json={"task_id": "nope"}).status_code == 404
    assert api.post("/episodes", json={"task": "finish_dune"}).status_code == 400
    assert api.post("/episodes", content=b"{not json").status_code == 400
    taken = api.post("/episodes", json={"episode_id": sample["episode_id"]})
    assert taken.status_code == 409
    assert api.post("/episodes/nope/mcp", json={}).status_code == 404
    api.delete(f"/episodes/{sample['episode_id']}")


async def _call(url: str, tool: str, arguments: dict):
    """A fresh MCP session for a single call, as verl and OpenEnv clients do."""
    async with Client(url) as client:
        return await client.call_tool(tool, arguments)


@pytest.mark.integration
async def test_mcp_sdk_over_http_keeps_concurrent_episodes_apart(http_server):
    async with httpx.AsyncClient(base_url=http_server.url, headers=http_server.headers, timeout=60) as api:
        episodes = [(await api.post("/episodes", json={"task_id": "finish_dune"})).json() for _ in range(8)]

        async def work(n: int, episode: dict) -> None:
            for i in range(3):
                result = await _call(episode["mcp_url"], "add_book", {"title": f"ep{n}-{i}", "author": "A"})
                assert not result.is_error, text(result)

        await asyncio.gather(*(work(n, e) for n, e in enumerate(episodes)))
        for n, episode in enumerate(episodes):
            state = (await api.get(f"/episodes/{episode['episode_id']}/state")).json()
            assert [b["title"] for b in state["book"]] == ["Dune", "Emma", f"ep{n}-0", f"ep{n}-1", f"ep{n}-2"]
            await api.delete(f"/episodes/{episode['episode_id']}")


@pytest.mark.integration
async def test_mcp_sdk_over_http_a_hung_tool_does_not_stop_other_episodes(http_server):
    async with httpx.AsyncClient(base_url=http_server.url, headers=http_server.headers, timeout=60) as api:
        stuck = (await api.post("/episodes", json={"task_id": "finish_dune"})).json()
        others = [(await api.post("/episodes", json={"task_id": "finish_dune"})).json() for _ in range(3)]
        async with Client(stuck["mcp_url"]) as client:
            hang = asyncio.create_task(client.call_tool("add_then_stall", {"title": "x"}))
            results = await asyncio.gather(*(_call(o["mcp_url"], "mark_read", {"book_id": "BK-0001"}) for o in others))
            assert not any(r.is_error for r in results)
            hung = await hang
        assert hung.is_error and "was stopped" in text(hung)
        assert (await api.get(f"/episodes/{stuck['episode_id']}/state")).json() == {"book": [DUNE, EMMA]}
        for other in others:
            state = (await api.get(f"/episodes/{other['episode_id']}/state")).json()
            assert state["book"][0]["status"] == "read"
            await api.delete(f"/episodes/{other['episode_id']}")
        await api.delete(f"/episodes/{stuck['episode_id']}")


@pytest.mark.integration
async def test_mcp_sdk_over_http_bad_input_and_reward(http_server):
    async with httpx.AsyncClient(base_url=http_server.url, headers=http_server.headers, timeout=60) as api:
        episode = (await api.post("/episodes", json={"task_id": "finish_dune"})).json()
        async with Client(episode["mcp_url"]) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == TOOLS
            unknown = await client.call_tool("reset", {})
            assert unknown.is_error and "Unknown tool: 'reset'" in text(unknown)
            missing = await client.call_tool("mark_read", {})
            assert missing.is_error and "missing required argument 'book_id'" in text(missing)
            huge = await client.call_tool("mark_read", {"book_id": "B" * (1 << 20)})
            assert huge.is_error and "is too long" in text(huge)
            for tool, arguments in SOLUTION:
                assert not (await client.call_tool(tool, arguments)).is_error
        assert (await api.get(f"/episodes/{episode['episode_id']}/reward")).json()["passed"] is True
        await api.delete(f"/episodes/{episode['episode_id']}")
