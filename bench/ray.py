"""Episodes on Ray (mcp_servers.ray_service) on a local cluster of 1 and of 2 nodes: episodes
created per second, tool calls per second across the live episodes, p50/p99 call latency through
the router, and memory per live episode (PSS of the episode processes, as bench.memory measures it,
and their files; at most --max-processes processes per actor, 256 by default, the other episodes
parked on their files, so 1,024 live episodes fit this machine).

The workload is bench.runtime's (the domain's own success tests on the sample state), run once on
every live episode by 64 driver threads, each call through the router. The nodes share this machine:
two nodes here show what the router and the placement cost, not more cores.

    python -m bench.ray [--domain NAME] [--live 256 1024] [--nodes 1 2] [--max-processes 256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

from bench.memory import _pss_kib
from bench.runtime import INFRA_ERRORS, percentiles, workload
from mcp_servers.ray_service import ROOT, RayEnvironment


def _memory_of_episodes(actor) -> tuple[list[int], int, int]:
    """(KiB of PSS of each running episode process, bytes of all episodes' files, live episodes) of an
    actor, read in the actor (its pids, its node); an episode parked under max_processes has no process."""
    def read(self) -> tuple[list[int], int, int]:
        pool, episodes = self.env.pool, self.env.episodes()
        pids = [pool.pid(e.id) for e in episodes]
        files = sum(f.stat().st_size for e in episodes for f in Path(pool.folder(e.id)).iterdir())
        return [_pss_kib(pid) for pid in pids if pid is not None], files, len(episodes)
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
        memory = [_memory_of_episodes(actor.handle) for actor in env.router.actors]
        pss = [kib for kibs, _files, _live in memory for kib in kibs]
        per_live = (sum(pss) * 1024 + sum(files for _pss, files, _live in memory)) / live / 2**20
        alone = [s for _ in range(5) for s in rollout(episodes[0])[0]]
        list(pool.map(lambda e: e.close(), episodes))
    spent = [s for per, _ in done for s in per]
    p50, p99 = percentiles(spent)
    return {"created_per_s": created, "calls_per_s": len(spent) / wall, "p50_ms": p50, "p99_ms": p99,
            "alone_ms": percentiles(alone)[0], "pss_mib": statistics.mean(pss) / 1024, "processes": len(pss),
            "per_live_mib": per_live, "errors": sum(e for _, e in done)}


def main(name: str = "job_seeking", lives: tuple[int, ...] = (256, 1024), node_counts: tuple[int, ...] = (1, 2),
         max_processes: int | None = 256) -> None:
    print(f"episodes on Ray, domain {name}: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"at most {max_processes or 'any number of'} episode processes per actor", flush=True)
    for nodes in node_counts:
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
                 logging_level="WARNING", log_to_driver=False)
        try:
            with RayEnvironment(name, actors=nodes, max_calls=None, max_episodes=max(lives) + 16,
                                max_processes=max_processes) as env:
                calls = workload(env, env.sample_state())
                for live in lives:
                    got = measure(env, live, calls)
                    print(f"  {nodes} node{'s' if nodes > 1 else ' '} {live:>5} live: {got['created_per_s']:7.1f} "
                          f"episodes created/s, {got['calls_per_s']:7.0f} calls/s; latency through the router "
                          f"p50 {got['p50_ms']:.2f} / p99 {got['p99_ms']:.2f} ms at 64 clients, p50 "
                          f"{got['alone_ms']:.2f} ms for one alone; {got['pss_mib']:.2f} MiB PSS per episode process "
                          f"after the workload ({got['processes']} running), {got['per_live_mib']:.2f} MiB per live "
                          f"episode with the files ({got['errors']} runtime errors)", flush=True)
        finally:
            ray.shutdown()
            cluster.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.ray")
    parser.add_argument("--domain", default="job_seeking")
    parser.add_argument("--live", type=int, nargs="+", default=[256, 1024], help="live episodes per measurement")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2], help="cluster sizes")
    parser.add_argument("--max-processes", type=int, default=256,
                        help="episode processes running at once per actor (0: no limit; past it the least recently "
                             "used idle episodes are parked on their files)")
    options = parser.parse_args()
    main(options.domain, tuple(options.live), tuple(options.nodes), options.max_processes or None)
