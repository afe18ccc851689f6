"""One server, many domains: episodes of two domains open at once, in process and over HTTP,
each confined in its own domain's process and each scoring 1.0 after its reference solution."""

from __future__ import annotations

import itertools
import json
import shutil

import httpx
import pytest

from domains.registry import ROOT_ENV
from domains.task_model import Task
from mcp_servers.http_process import http_server
from mcp_servers.runtime import EpisodeError
from mcp_servers.universe import Universe, UnknownDomain
from tests.support.domain_copies import SOURCE, domains_root

pytestmark = pytest.mark.slow  # two domains' template processes; job_seeking's reward loads the embedding model

TASKS = {"job_seeking": "task_001", "reading_list": "finish_dune"}


@pytest.fixture(scope="module")
def root(tmp_path_factory, fixture_domain):
    """job_seeking (its first two tasks) and the reading list: two domains with different tools."""
    base = domains_root(tmp_path_factory.mktemp("universe"), ["job_seeking"], tasks=2)
    shutil.copytree(fixture_domain, base / "reading_list")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ROOT_ENV, str(base))
        yield base


def reference(root, domain: str) -> Task:
    return Task.model_validate_json((root / domain / "tasks" / f"{TASKS[domain]}.json").read_text())


def test_one_universe_serves_episodes_of_two_domains_at_once(root):
    with Universe("all", call_timeout=5.0) as universe:
        assert universe.names == ["job_seeking", "reading_list"]
        episodes = {d: universe.create_episode(TASKS[d], f"ep-{d}", domain=d) for d in TASKS}  # both open
        for domain, episode in episodes.items():
            assert episode.env.name == domain and universe.get_episode(episode.id) is episode
            for step in reference(root, domain).reference_solution:
                assert episode.call(step.tool, step.arguments).ok
        assert {d: e.reward()["reward"] for d, e in episodes.items()} == {d: 1.0 for d in TASKS}
        # ids are unique across domains; an unknown or missing domain names the served ones
        with pytest.raises(EpisodeError, match="already exists"):
            universe.create_episode("finish_dune", "ep-job_seeking", domain="reading_list")
        with pytest.raises(UnknownDomain, match="served domains are: job_seeking, reading_list"):
            universe.create_episode("task_001", domain="pet_care")
        with pytest.raises(UnknownDomain, match="several domains are served"):
            universe.create_episode("task_001")


@pytest.mark.integration
def test_one_http_server_scores_episodes_of_two_domains(root):
    ids = itertools.count(1)

    def mcp(url: str, method: str, params: dict) -> dict:
        reply = httpx.post(url, timeout=60, headers={"accept": "application/json, text/event-stream"},
                           json={"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}).json()
        assert "error" not in reply, reply
        return reply["result"]

    with http_server("job_seeking,reading_list", startup_s=120) as served:
        control = httpx.Client(base_url=served.url, headers=served.headers, timeout=60)
        listed = control.get("/domains").json()["domains"]
        assert [(d["name"], d["tasks"]) for d in listed] == [("job_seeking", 2), ("reading_list", 2)]
        opened = {}
        for domain, task_id in TASKS.items():  # both episodes open before either is played
            answer = control.post("/episodes", json={"domain": domain, "task_id": task_id})
            assert answer.status_code == 201, answer.text
            opened[domain] = answer.json()
            assert opened[domain]["domain"] == domain
        for domain, episode in opened.items():
            tools = {t["name"] for t in mcp(episode["mcp_url"], "tools/list", {})["tools"]}
            assert tools == {t["function"]["name"] for t in control.get("/tools", params={"domain": domain}).json()}
            for step in reference(root, domain).reference_solution:
                result = mcp(episode["mcp_url"], "tools/call", {"name": step.tool, "arguments": step.arguments})
                assert not result.get("isError"), result
        rewards = {d: control.get(f"/episodes/{e['episode_id']}/reward").json()["reward"] for d, e in opened.items()}
        assert rewards == {"job_seeking": 1.0, "reading_list": 1.0}

        unknown = control.post("/episodes", json={"domain": "pet_care", "task_id": "task_001"})
        assert unknown.status_code == 404 and "job_seeking, reading_list" in unknown.json()["error"]
        unnamed = control.post("/episodes", json={"task_id": "task_001"})
        assert unnamed.status_code == 400 and "name one" in unnamed.json()["error"]
        assert control.get("/tasks").status_code == 400
        assert control.get("/tasks", params={"domain": "reading_list"}).json() == {
            "tasks": sorted(json.loads(p.read_text())["id"] for p in (root / "reading_list" / "tasks").glob("*.json"))}


@pytest.mark.integration
def test_the_cli_refuses_what_one_domain_only_can_do(root):
    import subprocess
    import sys

    for extra in (["--transport", "stdio"], ["--transport", "http", "--task", "task_001"]):
        done = subprocess.run([sys.executable, "-m", "mcp_servers", "all", *extra], capture_output=True, text=True,
                              timeout=60, cwd=SOURCE.parents[1])
        assert done.returncode == 2 and "serves one domain" in done.stderr and "job_seeking, reading_list" in done.stderr
