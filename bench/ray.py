"""Episodes on Ray (mcp_servers.ray_service) on a local cluster of 1 and of 2 nodes: episodes
created per second, tool calls per second across the live episodes, p50/p99 call latency through
the router, and memory per live episode (PSS of the episode processes, as bench.runtime measures it).

The workload is bench.runtime's (the domain's own success tests on the sample state), run once on
every live episode by 64 driver threads, each call through the router. The nodes share this machine:
two nodes here show what the router and the placement cost, not more cores.

    python -m bench.ray [--domain NAME] [--live 256 1024] [--nodes 1 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import ray
from ray.cluster_utils import Cluster

from bench.memory import _pss_kib
from bench.runtime import INFRA_ERRORS, percentiles, workload
from mcp_servers.ray_service import ROOT, RayEnvironment


def _pss_of_episodes(actor) -> list[int]:
    """KiB of PSS of each episode process an actor holds (read in the actor: its pids, this machine)."""
    def read(self) -> list[int]:
        return [_pss_kib(self.env.pool.pid(e.id)) for e in self.env.episodes()]
    return ray.get(actor.__ray_call__.remote(read), timeout=600)


def measure(env: RayEnvironment, live: int, calls: list[tuple[str, dict]]) -> dict:
    """Create `live` episodes, run the workload once on every one of them (64 client threads), then
    read each episode process's PSS; and the latency of one client alone on one episode."""
    threads = min(64, live)
    with ThreadPoolExecutor(threads) as pool:
        started = time.perf_counter()
        episodes = list(pool.map(lambda _n: env.create_episode(), range(live)))
        created = live / (time.perf_counter() - started)

        def rollout(episode) -> tuple[list[float], int]:
            spent, errors = [], 0
            for tool, arguments in calls:
                began = time.perf_counter()
                out = episode.call(tool, arguments)
                spent.append(time.perf_counter() - began)
                errors += (not out.ok and out.error_type in INFRA_ERRORS)
            return spent, errors

        began = time.perf_counter()
        done = list(pool.map(rollout, episodes))
        wall = time.perf_counter() - began
        pss = [kib for actor in env.router.actors for kib in _pss_of_episodes(actor.handle)]
        alone = [s for _ in range(5) for s in rollout(episodes[0])[0]]
        list(pool.map(lambda e: e.close(), episodes))
    spent = [s for per, _ in done for s in per]
    p50, p99 = percentiles(spent)
    return {"created_per_s": created, "calls_per_s": len(spent) / wall, "p50_ms": p50, "p99_ms": p99,
            "alone_ms": percentiles(alone)[0], "pss_mib": statistics.mean(pss) / 1024,
            "errors": sum(e for _, e in done)}


def main(name: str = "job_seeking", lives: tuple[int, ...] = (256, 1024), node_counts: tuple[int, ...] = (1, 2)) -> None:
    print(f"episodes on Ray, domain {name}: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for nodes in node_counts:
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
                 logging_level="WARNING", log_to_driver=False)
        try:
            with RayEnvironment(name, actors=nodes, max_calls=None, max_episodes=max(lives) + 16) as env:
                calls = workload(env, env.sample_state())
                for live in lives:
                    got = measure(env, live, calls)
                    print(f"  {nodes} node{'s' if nodes > 1 else ' '} {live:>5} live: {got['created_per_s']:7.1f} "
                          f"episodes created/s, {got['calls_per_s']:7.0f} calls/s; latency through the router "
                          f"p50 {got['p50_ms']:.2f} / p99 {got['p99_ms']:.2f} ms at 64 clients, p50 "
                          f"{got['alone_ms']:.2f} ms for one alone; {got['pss_mib']:.2f} MiB PSS per episode after "
                          f"the workload ({got['errors']} runtime errors)", flush=True)
        finally:
            ray.shutdown()
            cluster.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.ray")
    parser.add_argument("--domain", default="job_seeking")
    parser.add_argument("--live", type=int, nargs="+", default=[256, 1024], help="live episodes per measurement")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2], help="cluster sizes")
    options = parser.parse_args()
    main(options.domain, tuple(options.live), tuple(options.nodes))
