"""Episodes on a two-node local Ray cluster: spread over both nodes, every task's reference
solution rewarded through the router and through direct actor handles, then one node killed
mid-run: each of its episodes is restored with its committed state or names itself in a clear
error, and nothing committed on the surviving node is lost or changed."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from mcp_servers.ray_service import RayEnvironment  # noqa: E402
from mcp_servers.runtime import EpisodeError  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(1200)]
EPISODES = 256
TOKEN = "ray-episodes-test-token"


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    worker = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, runtime_env={"env_vars": {"PYTHONPATH": str(_root())}},
             logging_level="WARNING", log_to_driver=False)
    yield cluster, worker
    ray.shutdown()
    cluster.shutdown()


def _root():
    from mcp_servers.ray_service import ROOT

    return ROOT


def _direct(handle, method: str, *args):
    """A trainer on Ray: the actor's method, no router."""
    answer = ray.get(getattr(handle, method).remote(*args), timeout=120)
    assert "error" not in answer, answer
    return answer["ok"]


def test_the_http_api_fronts_episodes_on_ray(cluster, monkeypatch):
    """`--ray`: the control API and each episode's MCP URL, unchanged, over actors on both nodes."""
    import asyncio

    import httpx
    from fastmcp import Client

    from mcp_servers.http_process import http_server

    cluster, _worker = cluster
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)

    async def rollouts(served, tasks: list[str]) -> None:
        async with httpx.AsyncClient(base_url=served.url, headers=served.headers, timeout=120) as api:
            for task_id in tasks:
                episode = (await api.post("/episodes", json={"task_id": task_id})).json()
                reward = f"/episodes/{episode['episode_id']}/reward"
                assert (await api.get(reward)).json()["reward"] < 1.0
                task = (await api.get(f"/episodes/{episode['episode_id']}/task")).json()
                async with Client(episode["mcp_url"]) as agent:
                    for step in task["reference_solution"]:
                        assert not (await agent.call_tool(step["tool"], step["arguments"])).is_error
                assert (await api.get(reward)).json()["reward"] == 1.0
            health = (await api.get("/health")).json()
            assert health["actors"] == 2 and health["ok"]

    with http_server("job_seeking", "--ray", "--max-calls", "0", startup_s=300, quiet=True) as served:
        asyncio.run(rollouts(served, ["task_001", "task_002", "task_003", "task_004"]))


async def _http_rollouts(url: str, episode_ids: list[str]) -> None:
    """The trainer's HTTP API and each episode's MCP URL: noop below 1, the reference solution 1.0."""
    import asyncio

    import httpx
    from fastmcp import Client

    gate = asyncio.Semaphore(16)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as api:
        async def rollout(episode_id: str) -> None:
            async with gate:
                reward = f"/episodes/{episode_id}/reward"
                assert (await api.get(reward)).json()["reward"] < 1.0
                task = (await api.get(f"/episodes/{episode_id}/task")).json()
                async with Client(f"{url}/episodes/{episode_id}/mcp") as agent:
                    for step in task["reference_solution"]:
                        out = await agent.call_tool(step["tool"], step["arguments"], raise_on_error=False)
                        assert not out.is_error, (task["id"], step["tool"], out.content)
                assert (await api.get(reward)).json()["reward"] == 1.0, task["id"]

        await asyncio.gather(*(rollout(e) for e in episode_ids))


def test_two_nodes_serve_rewarded_episodes_and_survive_a_node_kill(cluster):
    """256 live episodes on two nodes, a third each through the HTTP API, the router and direct actor
    handles, all open at once; then the worker node dies under running calls."""
    import asyncio

    import httpx

    from mcp_servers.http_app import create_app
    from tests.support.model_endpoint import LocalServer

    cluster, worker = cluster
    with RayEnvironment("job_seeking", actors=2, max_episodes=EPISODES + 8, max_calls=None) as env, \
            LocalServer(app=create_app(env, token=TOKEN)) as served:
        nodes = {a.node for a in env.router.actors}
        assert len(nodes) == 2, "the two actors were not spread over both nodes"
        tasks = [t for t in env.task_ids() if env.task(t).kind == "change"]  # scored by their state alone
        plan = [tasks[n % len(tasks)] for n in range(EPISODES)]
        by_http = [n for n in range(EPISODES) if n % 3 == 0]
        with httpx.Client(base_url=served.root, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as api:
            made = {n: api.post("/episodes", json={"task_id": plan[n]}).json()["episode_id"] for n in by_http}
        with ThreadPoolExecutor(16) as pool:
            others = [n for n in range(EPISODES) if n % 3]
            made.update(zip(others, pool.map(lambda n: env.create_episode(plan[n]).id, others)))
        episodes = [env.get_episode(made[n]) for n in range(EPISODES)]
        assert len(env.episodes()) == EPISODES
        held = {env.router.actors[env.router.placement(e.id).actor].node for e in episodes}
        assert held == nodes, "the episodes were not spread over both nodes"

        def run(n: int) -> None:
            """Noop scores below 1; the reference solution scores 1.0; through the router or a handle."""
            episode = episodes[n]
            task = env.task(episode.task_id)
            direct = n % 3 == 2
            handle = env.handle(episode.id)
            assert (_direct(handle, "reward", episode.id) if direct else episode.reward())["reward"] < 1.0, \
                f"{task.id}: doing nothing already scores 1"
            for step in task.reference_solution:
                if direct:
                    out = _direct(handle, "call", episode.id, step.tool, step.arguments)
                    assert out["ok"], (task.id, step.tool, out["error"])
                else:
                    out = episode.call(step.tool, step.arguments)
                    assert out.ok, (task.id, step.tool, out.error)
            reward = _direct(handle, "reward", episode.id) if direct else episode.reward()
            assert reward["reward"] == 1.0, (task.id, reward)

        with ThreadPoolExecutor(16) as pool:  # the HTTP rollouts run beside the others
            through_http = pool.submit(asyncio.run, _http_rollouts(served.root, [made[n] for n in by_http]))
            list(pool.map(run, [n for n in range(EPISODES) if n % 3]))
            through_http.result()
        with ThreadPoolExecutor(16) as pool:
            committed = dict(zip((e.id for e in episodes), pool.map(lambda e: e.state(), episodes)))

        # A node dies while calls are running on every episode.
        on_worker = {e.id for e in episodes
                     if env.router.actors[env.router.placement(e.id).actor].node == worker.node_id}
        assert on_worker and len(on_worker) < EPISODES
        stop = threading.Event()
        outcomes: dict[str, list] = {e.id: [] for e in episodes}

        def keep_reading(episode) -> None:
            while not stop.is_set():
                try:  # a read: repeated on the restored episode when its node dies under it
                    outcomes[episode.id].append(episode.call("get_application_statistics", {}).ok)
                except EpisodeError as error:
                    outcomes[episode.id].append(str(error))
                    return

        readers = [threading.Thread(target=keep_reading, args=(e,)) for e in episodes[:16]]
        for thread in readers:
            thread.start()
        time.sleep(1.0)
        cluster.remove_node(worker, allow_graceful=False)
        time.sleep(2.0)
        stop.set()
        for thread in readers:
            thread.join(timeout=180)
            assert not thread.is_alive(), "a call hung after its node died"

        restored = lost = 0
        for episode in episodes:
            try:
                state = episode.state()
            except EpisodeError as error:
                assert episode.id in on_worker, f"an episode of the surviving node failed: {error}"
                assert episode.id in str(error)
                lost += 1
                continue
            assert state == committed[episode.id], f"episode {episode.id} does not hold its committed state"
            assert episode.reward()["reward"] == 1.0
            restored += episode.id in on_worker
        assert restored + lost == len(on_worker)
        for episode_id, seen in outcomes.items():
            for outcome in seen:
                assert outcome is True or episode_id in outcome, outcome
        assert all(env.router.actors[env.router.placement(e.id).actor].node != worker.node_id
                   for e in episodes if not env.router.placement(e.id).lost)


def test_an_episode_whose_files_are_gone_names_itself_in_every_error(cluster):
    """Where a dead actor's files cannot be read (another machine, no shared storage), the episode
    answers one clear error naming it; its neighbour, whose files are there, is restored."""
    with RayEnvironment("job_seeking", actors=2, max_calls=None) as env:
        task = env.task_ids()[0]
        made = [env.create_episode(task) for _ in range(3)]  # two of them share an actor
        first, second = next((a, b) for a in made for b in made
                             if a is not b and env.router.placement(a.id).actor == env.router.placement(b.id).actor)
        index = env.router.placement(first.id).actor
        assert first.state() == env.initial_state(task)
        step = env.task(task).reference_solution[0]
        assert first.call(step.tool, step.arguments).ok and second.call(step.tool, step.arguments).ok
        kept = second.state()
        folder = env.router.placement(first.id).folder
        for name in os.listdir(folder):  # as if on a machine that is gone (the folder is a mount point)
            os.unlink(os.path.join(folder, name))
        ray.kill(env.router.actors[index].handle)
        for _ in range(2):  # every request, not only the first, says so
            with pytest.raises(EpisodeError, match=first.id):
                first.state()
        assert second.state() == kept
        assert env.health()["episodes_lost"] == 1
