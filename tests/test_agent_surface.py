"""Reward hacking through the serving surface: what an agent's MCP client can reach, and what the
trainer's can.

A task whose reference solution, instruction and user profile carry canary strings is served
over stdio and HTTP. An agent's client tries every way it can reach (resources, resource
templates, prompts, completions, extensions such as Skills; the control routes with no token, a wrong one, the
right one in the wrong place; other episodes' MCP URLs; guessed routes) and no answer may carry
a canary, the task's JSON or a reward: the agent learns what its tool calls return and nothing
more. The trainer, with the token, still gets the task, the reward and the state, and
--expose-trainer-resources puts them back on the MCP channel for debugging.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time

import httpx
import pytest
from fastmcp import Client
from fastmcp.apps import UI_EXTENSION_ID
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp_types import PromptReference, ResourceTemplateReference

from mcp_servers.control_token import TOKEN_ENV, bearer
from tests.support.fixture_domain import DUNE, EMMA, ROOT, http_server

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TOOLS = ["add_book", "add_then_fail", "add_then_hang", "add_then_stall", "export_list", "get_book", "mark_read",
         "remove_book"]
CANARY_TASK = {
    "id": "canary",
    "instruction": "CANARY-INSTRUCTION-90d4: add the book my friend recommended.",
    "user_profile": "CANARY-PROFILE-55e1",
    "initial_state": {"book": [DUNE, EMMA]},
    "reference_solution": [{"tool": "add_book",
                            "arguments": {"title": "CANARY-TITLE-7f3a", "author": "CANARY-AUTHOR-b21c", "pages": 123}}],
    "reward_spec": {},
}
# What must never reach the agent: the task's text and answers, its JSON, a reward result's JSON.
SECRETS = ["CANARY-", "reference_solution", "reward_spec", "initial_state", "user_profile", '"reward"', "'reward'",
           "breakdown", "untouched", "semantic_threshold"]
TRAINER_URIS = ["episode://task", "episode://reward", "episode://state", "episode://info"]
GUESSED_URIS = [*TRAINER_URIS, "episode://reference", "episode://task/reference_solution", "episode://canary",
                "resource://task", "task://canary", "reward://canary", "file:///etc/hostname", "ui://index.html",
                "skill://task/SKILL.md"]
GUESSED_PROMPTS = ["task", "reward", "reference", "instruction", "canary"]


def leaks(texts: list[str]) -> list[str]:
    return [f"{secret!r} in {text[:300]!r}" for text in texts for secret in SECRETS if secret in text]


@pytest.fixture(scope="module")
def canary_domain(fixture_domain, tmp_path_factory):
    domain = tmp_path_factory.mktemp("surface") / fixture_domain.name
    shutil.copytree(fixture_domain, domain)
    (domain / "tasks" / "canary.json").write_text(json.dumps(CANARY_TASK))
    return domain


async def probe(client: Client) -> dict:
    """Everything an agent's MCP client can ask besides its tools, and one of each kind of tool call:
    what it listed, what each read gave, and the text of every answer and error it got."""
    seen: dict = {"texts": [client.instructions or ""], "read": {}, "prompts_got": {}}
    async with client:
        seen["texts"].append(client.instructions or "")
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools)
        seen["texts"] += [json.dumps(t.model_dump(mode="json")) for t in tools]
        seen["resources"] = [str(r.uri) for r in await client.list_resources()]
        seen["templates"] = [t.uri_template for t in await client.list_resource_templates()]
        seen["prompts"] = [p.name for p in await client.list_prompts()]
        capabilities = client.server_capabilities
        seen["extensions"] = sorted((capabilities.extensions or {}) if capabilities else {})  # e.g. Skills
        for uri in GUESSED_URIS:
            try:
                contents = await client.read_resource(uri)
                seen["read"][uri] = "read"
                seen["texts"] += [getattr(c, "text", "") for c in contents]
            except Exception as error:  # the answer an agent gets is the error's text, less its own words
                seen["read"][uri] = str(error)
                seen["texts"].append(str(error).replace(uri, "<asked>"))
        for name in GUESSED_PROMPTS:
            try:
                got = await client.get_prompt(name, {})
                seen["prompts_got"][name] = "got"
                seen["texts"].append(got.model_dump_json())
            except Exception as error:
                seen["texts"].append(str(error).replace(name, "<asked>"))
        for ref in (ResourceTemplateReference(type="ref/resource", uri="episode://{name}"),
                    PromptReference(type="ref/prompt", name="task")):
            try:
                seen["texts"].append((await client.complete(ref, {"name": "t"})).model_dump_json())
            except Exception as error:
                seen["texts"].append(str(error))
        for tool, arguments in [("mark_read", {"book_id": "BK-0001"}), ("get_book", {"book_id": "BK-0404"}),
                                ("export_list", {})]:
            result = await client.call_tool(tool, arguments, raise_on_error=False)
            seen["texts"].append("".join(getattr(c, "text", "") for c in result.content))
    return seen


def assert_tools_only(seen: dict) -> None:
    assert seen["tools"] == TOOLS
    assert seen["resources"] == seen["templates"] == seen["prompts"] == []
    # FastMCP advertises the MCP Apps extension on every server; no ui:// resource is behind it
    assert set(seen["extensions"]) <= {UI_EXTENSION_ID} and "ui://index.html" in seen["read"]
    assert seen["prompts_got"] == {}
    for uri in TRAINER_URIS:
        assert "not served here: this MCP server offers tools only" in seen["read"][uri], seen["read"][uri]
    assert "read" not in seen["read"].values(), seen["read"]
    assert leaks(seen["texts"]) == []


# -- stdio ---------------------------------------------------------------------------------

def stdio_client(domain, *options: str) -> Client:
    return Client(StdioTransport(sys.executable, ["-m", "mcp_servers", str(domain), "--task", "canary", *options],
                                 env=dict(os.environ), cwd=str(ROOT)))


async def test_an_agent_on_stdio_reaches_the_tools_and_nothing_else(canary_domain):
    assert_tools_only(await probe(stdio_client(canary_domain)))


async def test_on_stdio_the_debug_flag_serves_the_trainer_resources(canary_domain):
    async with stdio_client(canary_domain, "--expose-trainer-resources") as client:
        assert sorted(str(r.uri) for r in await client.list_resources()) == sorted(TRAINER_URIS)
        task = json.loads((await client.read_resource("episode://task"))[0].text)
        assert task["reference_solution"] == CANARY_TASK["reference_solution"]
        reward = json.loads((await client.read_resource("episode://reward"))[0].text)
        assert reward["reward"] < 1.0 and "CANARY-TITLE-7f3a" in json.dumps(reward["breakdown"])


def test_the_help_says_the_flag_is_for_trainers_and_debugging():
    done = subprocess.run([sys.executable, "-m", "mcp_servers", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    flag = " ".join(done.stdout.split("--expose-trainer-resources\n", 1)[1].split("--call-timeout")[0].split())
    assert flag.startswith("FOR TRAINERS AND DEBUGGING ONLY") and "Never give an agent such a server" in flag
    assert TOKEN_ENV in done.stdout


# -- HTTP: the agent's side -----------------------------------------------------------------

@pytest.fixture(scope="module")
def served(canary_domain):
    with http_server(canary_domain, "--call-timeout", "0.5") as server:
        yield server


@pytest.fixture
def trainer(served):
    with httpx.Client(base_url=served.url, headers=served.headers, timeout=60) as client:
        yield client


def open_episode(trainer: httpx.Client, task_id: str) -> dict:
    created = trainer.post("/episodes", json={"task_id": task_id})
    assert created.status_code == 201, created.text
    return created.json()


def mcp_client(url: str, headers: dict | None = None) -> Client:
    return Client(StreamableHttpTransport(url, headers=headers))


async def test_an_agent_at_its_mcp_url_reaches_the_tools_and_nothing_else(served, trainer):
    mine, other = open_episode(trainer, "canary"), open_episode(trainer, "finish_dune")
    assert_tools_only(await probe(mcp_client(mine["mcp_url"])))
    # the token does not open the trainer's data on the MCP channel either
    assert_tools_only(await probe(mcp_client(mine["mcp_url"], served.headers)))
    # nor does another episode's MCP URL: its tools, nothing of its task
    assert_tools_only(await probe(mcp_client(other["mcp_url"])))
    unknown = httpx.post(mine["mcp_url"].replace(mine["episode_id"], "no-such-episode"), json={})
    assert unknown.status_code == 404 and leaks([unknown.text]) == []
    for episode in (mine, other):
        trainer.delete(f"/episodes/{episode['episode_id']}")


def control_routes(episode_id: str) -> list[tuple[str, str]]:
    """The control API's routes, and routes an agent might guess."""
    e = f"/episodes/{episode_id}"
    published = [("GET", "/openapi.json"), ("GET", "/health"), ("GET", "/tools"), ("GET", "/tasks"),
                 ("POST", "/episodes"), ("GET", "/episodes"), ("GET", e), ("DELETE", e), ("GET", f"{e}/state"),
                 ("GET", f"{e}/task"), ("GET", f"{e}/reward"), ("POST", f"{e}/reset")]
    guessed = [("GET", "/"), ("GET", "/docs"), ("GET", "/admin"), ("GET", "/metrics"), ("GET", "/debug"),
               ("GET", "/.well-known/oauth-authorization-server"), ("GET", f"{e}/reference"),
               ("GET", f"{e}/answer"), ("GET", f"{e}/verify"), ("POST", f"{e}/reward"), ("GET", f"{e}/mcp/task"),
               ("GET", f"{e}/mcp/reward"), ("GET", f"{e}/mcp/../reward"), ("GET", f"{e}/task/"),
               ("GET", f"/episodes/../episodes{e[9:]}/reward"), ("GET", "/tasks/canary"),
               ("GET", "/episodes/canary/task")]
    return published + guessed


def test_every_control_route_refuses_an_agent_without_the_token(served, trainer):
    episode = open_episode(trainer, "canary")
    eid = episode["episode_id"]
    token = served.token
    attempts = {  # what an agent might send, knowing the URL (and in some, even the token)
        "no credential": {},
        "a wrong token": {"headers": bearer("not-the-token-0123456789")},
        "a token one character short": {"headers": bearer(token[:-1])},
        "an empty bearer": {"headers": {"authorization": "Bearer"}},
        "the token as basic auth": {"headers": {"authorization": "Basic " + base64.b64encode(
            f"trainer:{token}".encode()).decode()}},
        "the token without a scheme": {"headers": {"authorization": token}},
        "the token in the query": {"params": {"token": token, "access_token": token}},
        "the token as a cookie": {"headers": {"cookie": f"token={token}"}},
        "the token as an API key": {"headers": {"x-api-key": token}},
    }
    answers = []
    with httpx.Client(base_url=served.url, timeout=60) as agent:
        for what, how in attempts.items():
            for method, path in control_routes(eid):
                answer = agent.request(method, path, **how)
                assert answer.status_code == 401, (what, method, path, answer.status_code, answer.text[:200])
                assert answer.headers["www-authenticate"] == "Bearer"
                assert "needs the operator's token" in answer.json()["error"]
                answers.append(answer.text)
    assert leaks(answers) == []
    # nothing the agent sent had an effect: the episode is open, unchanged
    info = trainer.get(f"/episodes/{eid}").json()
    assert info["closed"] is False and info["calls"] == 0
    assert eid in [e["episode_id"] for e in trainer.get("/episodes").json()["episodes"]]
    trainer.delete(f"/episodes/{eid}")


# -- HTTP: the trainer's side ---------------------------------------------------------------

async def test_the_trainer_with_the_token_gets_task_reward_and_state(served, trainer):
    episode = open_episode(trainer, "canary")
    eid = episode["episode_id"]
    assert episode["instruction"] == CANARY_TASK["instruction"]
    assert trainer.get(f"/episodes/{eid}/task").json()["reference_solution"] == CANARY_TASK["reference_solution"]
    assert trainer.get(f"/episodes/{eid}/reward").json()["reward"] < 1.0
    async with mcp_client(episode["mcp_url"]) as agent:  # the agent plays; the trainer scores
        (call,) = CANARY_TASK["reference_solution"]
        assert not (await agent.call_tool(call["tool"], call["arguments"])).is_error
    reward = trainer.get(f"/episodes/{eid}/reward").json()
    assert reward["reward"] == 1.0 and reward["passed"] is True
    assert [b["title"] for b in trainer.get(f"/episodes/{eid}/state").json()["book"]] == \
        ["Dune", "Emma", "CANARY-TITLE-7f3a"]
    assert trainer.delete(f"/episodes/{eid}").json() == {"episode_id": eid, "closed": True}


async def test_on_http_the_debug_flag_serves_the_trainer_resources(canary_domain):
    with http_server(canary_domain, "--expose-trainer-resources") as server:
        episode = httpx.post(f"{server.url}/episodes", json={"task_id": "canary"}, headers=server.headers).json()
        async with mcp_client(episode["mcp_url"]) as client:
            assert sorted(str(r.uri) for r in await client.list_resources()) == sorted(TRAINER_URIS)
            task = json.loads((await client.read_resource("episode://task"))[0].text)
            assert task["reference_solution"] == CANARY_TASK["reference_solution"]
        assert httpx.get(f"{server.url}/episodes/{episode['episode_id']}/task").status_code == 401  # still guarded


# -- the token itself -----------------------------------------------------------------------

def test_a_server_given_no_token_makes_one_and_tells_only_the_operator(canary_domain, free_port_env):
    port, env = free_port_env
    server = subprocess.Popen([sys.executable, "-m", "mcp_servers", str(canary_domain), "--transport", "http",
                               "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        token = None
        deadline = time.monotonic() + 60
        while token is None and time.monotonic() < deadline and server.poll() is None:
            line = server.stderr.readline()
            if line.startswith("control API token"):
                token = line.rsplit(" ", 1)[1].strip()
        assert token and len(token) >= 32
        base = f"http://127.0.0.1:{port}"
        while True:  # the line is printed before the socket listens
            try:
                health = httpx.get(f"{base}/health", headers=bearer(token))
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.1)
        assert health.status_code == 200
        assert httpx.get(f"{base}/health").status_code == 401
    finally:
        server.terminate()
        stdout, _ = server.communicate(timeout=30)
    assert token not in stdout


@pytest.fixture
def free_port_env():
    from mcp_servers.http_process import free_port

    return free_port(), {k: v for k, v in os.environ.items() if k != TOKEN_ENV}


def test_a_short_token_is_refused_before_serving(canary_domain):
    done = subprocess.run([sys.executable, "-m", "mcp_servers", str(canary_domain), "--transport", "http",
                           "--token", "short"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "at least 16 characters" in done.stderr and done.stdout == ""
