"""Episode creation and memory per episode: creation p50 in process, the PSS of an episode
process fresh and after the workload (bench.runtime's: the domain's own success tests on the
sample state) at N live episodes, and memory per live episode when at most M processes run
(Environment's max_processes: the others parked on their files).

    python -m bench.memory [--domain NAME_OR_PATH] [--live 1000] [--max-processes M (default N/8)]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from mcp_servers.runtime import Environment, resolve_domain


def _pss_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if row.startswith("Pss:"):
            return int(row.split()[1])
    return 0


def memory_per_episode(env: Environment, live: int, calls: list[tuple[str, dict]], workload_runs: bool = True) -> dict:
    """Proportional set size of `live` episode processes (each after the workload, unless not
    `workload_runs`), plus their files; an episode parked under max_processes has no process."""
    opened = []
    try:
        for _ in range(live):
            episode = env.create_episode()
            for tool, arguments in calls if workload_runs else ():
                episode.call(tool, arguments)
            opened.append(episode)
        pids = [env.pool.pid(e.id) for e in opened]
        pss = [_pss_kib(pid) for pid in pids if pid is not None]
        files = [sum(f.stat().st_size for f in Path(env.pool.folder(e.id)).iterdir()) for e in opened]
        template = _pss_kib(env.pool._template.pid)
    finally:
        for episode in opened:
            episode.close()
    return {"pss_mib": statistics.mean(pss) / 1024, "files_mib": statistics.mean(files) / 2**20,
            "total_gib": (sum(pss) * 1024 + sum(files)) / 2**30, "template_mib": template / 1024,
            "processes": len(pss), "per_live_mib": (sum(pss) * 1024 + sum(files)) / live / 2**20}


def memory_report(domain: Path, live: int, calls: list[tuple[str, dict]], cap: int) -> None:
    """Creation p50, PSS of an episode process fresh and after the workload at `live` live episodes,
    and memory per live episode with at most `cap` processes running."""
    with Environment(domain, max_calls=None, max_episodes=live + 16) as env:
        env.create_episode().close()  # the template database is built on the first one
        created = []
        for _ in range(60):
            started = time.perf_counter()
            episode = env.create_episode()
            created.append(time.perf_counter() - started)
            episode.close()
        print(f"episode creation, in process: p50 {statistics.median(created) * 1e3:.2f} ms over {len(created)}")
        fresh = memory_per_episode(env, min(live, 200), calls, workload_runs=False)
        print(f"a fresh episode process (no call yet, {min(live, 200)} live): {fresh['pss_mib']:.2f} MiB PSS")
        memory = memory_per_episode(env, live, calls)
        print(f"memory at {live} live episodes (each after the workload): {memory['pss_mib']:.2f} MiB PSS per "
              f"process + {memory['files_mib']:.2f} MiB database files = {memory['total_gib']:.2f} GiB in all "
              f"(template process {memory['template_mib']:.1f} MiB)")
    with Environment(domain, max_calls=None, max_episodes=live + 16, max_processes=cap) as env:
        capped = memory_per_episode(env, live, calls)
        print(f"with max_processes={cap}: {capped['per_live_mib']:.2f} MiB per live episode at {live} live "
              f"({capped['processes']} processes of {capped['pss_mib']:.2f} MiB PSS, the other episodes parked "
              f"on their files) = {capped['total_gib']:.2f} GiB in all")


def main(name: str = "job_seeking", live: int = 1000, cap: int | None = None) -> None:
    from bench.runtime import workload

    domain = resolve_domain(name)
    with Environment(domain, max_calls=None) as probe:
        calls = workload(probe, probe.initial_state())
    memory_report(domain, live, calls, cap or max(1, live // 8))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.memory")
    parser.add_argument("--domain", default="job_seeking", help="a domain name under domains/, or a path")
    parser.add_argument("--live", type=int, default=1000, help="live episodes")
    parser.add_argument("--max-processes", type=int, help="the process cap (default: live / 8)")
    options = parser.parse_args()
    main(options.domain, options.live, options.max_processes)
