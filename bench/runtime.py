"""The episode runtime: creation, reset, read and write calls in process, over stdio and over
HTTP, at the sample state (39 rows for job_seeking) and at about 7,500 rows; memory per live
episode at 1,000 live episodes; what the confinement costs; throughput; two anchors' designs.

The workload is the domain's own: every success procedural test whose initial state is part
of the sample state gives one call (a read or a write, by the tool's schema), run in order. The
large state is the sample copied with renumbered keys, the original rows kept, so the same calls
do the same work in a larger database. Anchors, timed on the same calls and states:
  subprocess  a fresh process per call, the state pickled in and out (CodeGym)
  deepcopy    a pydantic model of the database, deep-copied per reset (tau2-bench)
Aims: creation < 10 ms; in-process read and write p50 < 0.5 ms; write cost at 7,500 rows within
1.2x of the small state; 1,000 live episodes on 24 GiB.

    python -m bench.runtime [--domain NAME_OR_PATH] [--live 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import pickle
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field, create_model

from bench.memory import memory_report
from domains.spec import DBSchema, State, ToolTest
from mcp_servers.http_process import Served, http_server
from mcp_servers.runtime import Environment, resolve_domain
from mcp_servers.sample_state import table_order
from verification.procedural import tool_sources

ROOT = Path(__file__).resolve().parent.parent
INFRA_ERRORS = ("Timeout", "WorkerCrashed", "EpisodeError")  # the runtime failing, not the tool refusing


# -- the workload -------------------------------------------------------------------------

def _contained(state: State, within: State) -> bool:
    return all(row in within.get(table, []) for table, rows in state.items() for row in rows)


def workload(env: Environment, sample: State) -> list[tuple[str, dict]]:
    calls = []
    for tool in env.tools:
        path = env.dir / "tests" / f"{tool}.json"
        if not path.is_file():
            continue
        for raw in json.loads(path.read_text()):
            test = ToolTest.model_validate(raw)
            if test.kind == "success" and _contained(test.initial_state, sample):
                calls.append((tool, test.arguments))
                break
    return calls


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1e3, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3


def cell(seconds: list[float]) -> str:
    if not seconds:
        return f"{'-':>22}"
    p50, p99 = percentiles(seconds)
    return f"{p50:8.3f} / {p99:8.3f} ms"


# -- latency ------------------------------------------------------------------------------

def split(env: Environment, calls: list[tuple[str, dict]]) -> tuple[list, list]:
    reads = [c for c in calls if not env.tools[c[0]].mutates]
    return reads, [c for c in calls if env.tools[c[0]].mutates]


def updates_only(env: Environment, tool: str) -> bool:
    """A write whose verified tests only update rows by key: its own work does not grow with the table."""
    tests = json.loads((env.dir / "tests" / f"{tool}.json").read_text())
    changes = [c for t in tests if t["kind"] == "success" for c in (t.get("expect_changes") or {}).values()]
    return bool(changes) and all(c.get("updated") and not c.get("inserted") and not c.get("deleted") for c in changes)


def bench_in_process(env: Environment, calls: list[tuple[str, dict]], rounds: int) -> dict:
    reads, writes = split(env, calls)
    episode = env.create_episode()
    out = {"read": [], "write": [], "update": [], "reset": [], "create": [], "own": [], "errors": 0}
    for _ in range(rounds):
        episode.reset()
        for tool, arguments in calls:
            result = episode.call(tool, arguments)
            out["write" if (tool, arguments) in writes else "read"].append(result.seconds)
            if result.tool_seconds is not None:
                out["own"].append(result.seconds - result.tool_seconds)
            if (tool, arguments) in writes and updates_only(env, tool):
                out["update"].append(result.seconds)
            out["errors"] += (not result.ok and result.error_type in INFRA_ERRORS)
        started = time.perf_counter()
        episode.reset()
        out["reset"].append(time.perf_counter() - started)
    for _ in range(max(30, rounds)):
        started = time.perf_counter()
        extra = env.create_episode()
        out["create"].append(time.perf_counter() - started)
        extra.close()
    episode.close()
    return out


async def bench_stdio(domain: Path, env: Environment, calls: list[tuple[str, dict]], rounds: int) -> dict:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_servers", str(domain), "--max-calls", "0"],
                                   cwd=str(ROOT), env=dict(os.environ))
    _reads, writes = split(env, calls)
    out = {"read": [], "write": [], "errors": 0}
    async with Client(params) as client:
        for _ in range(rounds):
            for tool, arguments in calls:
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                out["write" if (tool, arguments) in writes else "read"].append(time.perf_counter() - started)
                out["errors"] += _is_infra_error(result)
    return out


async def bench_http(server: Served, env: Environment, calls: list[tuple[str, dict]], rounds: int) -> dict:
    from mcp import Client

    _reads, writes = split(env, calls)
    out = {"read": [], "write": [], "reset": [], "create": [], "errors": 0}
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=60) as api:
        for _ in range(30):
            started = time.perf_counter()
            created = (await api.post("/episodes")).json()
            out["create"].append(time.perf_counter() - started)
            await api.delete(f"/episodes/{created['episode_id']}")
        episode = (await api.post("/episodes")).json()
        async with Client(episode["mcp_url"]) as client:
            for _ in range(rounds):
                started = time.perf_counter()
                await api.post(f"/episodes/{episode['episode_id']}/reset")
                out["reset"].append(time.perf_counter() - started)
                for tool, arguments in calls:
                    started = time.perf_counter()
                    result = await client.call_tool(tool, arguments)
                    out["write" if (tool, arguments) in writes else "read"].append(time.perf_counter() - started)
                    out["errors"] += _is_infra_error(result)
        await api.delete(f"/episodes/{episode['episode_id']}")
    return out


def _is_infra_error(result) -> bool:
    return result.is_error and any(f"({kind})" in result.content[0].text for kind in INFRA_ERRORS)


def domain_with_sample(domain: Path, state: State, into: Path) -> Path:
    """A copy of the domain whose sample state is `state`: what the stdio and HTTP servers serve."""
    copy_dir = into / domain.name
    shutil.copytree(domain, copy_dir, ignore=shutil.ignore_patterns("tasks", "transcript.jsonl", "graph.*"))
    (copy_dir / "sample_state.json").write_text(json.dumps(state))
    return copy_dir


# -- confinement ---------------------------------------------------------------------------

def confinement_cost(domain: Path, calls: list[tuple[str, dict]], rounds: int) -> tuple[dict, dict]:
    """The same measurements with and without the episode processes' own confinement."""
    out = []
    for unconfined in (False, True):
        with Environment(domain, max_calls=None, unsafe_unconfined=unconfined) as env:
            out.append(bench_in_process(env, calls, rounds))
    return out[0], out[1]


# -- throughput -----------------------------------------------------------------------------

async def throughput_in_process(env: Environment, calls: list[tuple[str, dict]], episodes: int, seconds: float) -> dict:
    """Concurrent rollouts on one event loop, as an async RL rollout worker runs them (Episode.acall)."""
    opened = [env.create_episode() for _ in range(episodes)]
    counts, errors = [0] * episodes, [0] * episodes
    deadline = time.perf_counter() + seconds

    async def rollouts(n: int) -> None:
        episode = opened[n]
        while time.perf_counter() < deadline:
            await episode.areset()
            for tool, arguments in calls:
                out = await episode.acall(tool, arguments)
                errors[n] += (not out.ok and out.error_type in INFRA_ERRORS)
                counts[n] += 1

    started = time.perf_counter()
    await asyncio.gather(*(rollouts(n) for n in range(episodes)))
    wall = time.perf_counter() - started
    for episode in opened:
        episode.close()
    return {"calls": sum(counts), "wall": wall, "errors": sum(errors)}


# -- the anchors' designs -----------------------------------------------------------------

SUBPROCESS_CALL = r'''
import pickle, sqlite3, sys, types
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool
from sqlmodel import Session
db_source, tool_source, tool, state, arguments = pickle.load(sys.stdin.buffer)
db = types.ModuleType("db")
sys.modules["db"] = db
exec(compile(db_source, "db.py", "exec"), db.__dict__)
conn = sqlite3.connect(":memory:")
engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
db.create_all(engine)
session = Session(engine)
db.load_state(session, state)
session.commit()
namespace = {}
exec(compile(tool_source, "tool", "exec"), namespace)
try:
    result, error = namespace[tool](session, **arguments), None
    session.commit()
except Exception as exc:
    session.rollback()
    result, error = None, repr(exc)
pickle.dump((result, error, db.dump_state(session)), sys.stdout.buffer)
'''


def anchor_subprocess(env: Environment, calls: list[tuple[str, dict]], state: State) -> list[float]:
    """A fresh interpreter per call with the state pickled in and out, as CodeGym runs tools."""
    db_source = (env.dir / "db.py").read_text()
    sources = tool_sources(env.dir)
    times = []
    for tool, arguments in calls[:10]:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", SUBPROCESS_CALL], capture_output=True, check=True,
                              input=pickle.dumps((db_source, sources[tool], tool, state, arguments)))
        _result, _error, state = pickle.loads(done.stdout)
        times.append(time.perf_counter() - started)
    return times


_PY = {"string": str, "text": str, "integer": int, "number": float, "boolean": bool, "date": date,
       "datetime": datetime}


def pydantic_db(schema: DBSchema) -> type[BaseModel]:
    """The database as nested pydantic models, the way tau2-bench keeps a domain's DB."""
    tables = {}
    for table in schema.tables:
        fields = {f"f_{c.name}": (_PY[c.type] | None, Field(None, alias=c.name)) for c in table.columns}
        tables[table.name] = create_model(f"Row_{table.name}", __config__=ConfigDict(populate_by_name=True), **fields)
    return create_model("Database", **{f"t_{name}": (list[row], Field([], alias=name)) for name, row in tables.items()})


def anchor_deepcopy(schema: DBSchema, state: State, repeats: int) -> list[float]:
    db = pydantic_db(schema).model_validate(state)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        copy.deepcopy(db)
        times.append(time.perf_counter() - started)
    return times


def scaled_state(schema: DBSchema, state: State, target_rows: int) -> State:
    """The sample state copied until it has about `target_rows` rows, keys and references renumbered."""
    rows = sum(len(v) for v in state.values())
    copies = max(1, target_rows // max(1, rows))
    numbered = re.compile(r"^(.*-)(\d+)$")
    out: State = {t: [] for t in state}
    order = table_order(schema)
    for i in range(copies):
        def key(value: str) -> str:
            if i == 0:  # the original rows keep their keys: the workload's calls find them
                return value
            match = numbered.match(value)
            return f"{match.group(1)}{int(match.group(2)) + i * 10_000:05d}" if match else f"{value}-{i}"

        for name in order:
            table = schema.table(name)
            for row in state.get(name, []):
                new = dict(row)
                for c in table.columns:
                    value = row.get(c.name)
                    if value is None:
                        continue
                    if c.primary_key or c.foreign_key:
                        new[c.name] = key(value)
                    elif c.unique and isinstance(value, str) and i:
                        new[c.name] = f"{i}-{value}"
                out[name].append(new)
    return out


# -- report -------------------------------------------------------------------------------

def ratio(anchor: list[float], ours: list[float]) -> str:
    a, o = statistics.median(anchor), statistics.median(ours)
    return f"{a * 1e3:10.3f} ms vs {o * 1e3:8.3f} ms  -> {a / o:8.1f}x"


def main(name: str = "job_seeking", live: int = 1000) -> None:
    try:
        domain = resolve_domain(name)
    except FileNotFoundError as error:
        print(f"runtime bench: {error}")
        return
    with Environment(domain, max_calls=None, max_episodes=max(live, 256) + 16) as env, \
            tempfile.TemporaryDirectory(prefix="worldsmith-bench-") as scratch:
        sample = env.initial_state()
        calls = workload(env, sample)
        if not calls:
            print(f"domain {env.name}: no success test runs on the sample state: nothing to measure")
            return
        big = scaled_state(env.spec.db, sample, 7_500)
        sizes = {"small": sum(len(v) for v in sample.values()), "large": sum(len(v) for v in big.values())}
        reads, writes = split(env, calls)
        print(f"domain {env.name}: {len(env.tools)} tools; workload {len(reads)} reads + {len(writes)} writes "
              f"({', '.join(t for t, _ in calls)}); one process per episode; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        rounds = max(5, 200 // len(calls))
        results: dict[str, dict[str, dict]] = {}
        errors = 0
        for size, state in (("small", None), ("large", big)):
            served = domain if state is None else domain_with_sample(domain, big, Path(scratch))
            with Environment(served, max_calls=None) as sized:
                results[size] = {"in process": bench_in_process(sized, calls, rounds)}
            results[size]["stdio"] = asyncio.run(bench_stdio(served, env, calls, max(3, rounds // 3)))
            with http_server(served, "--max-calls", "0", "--max-episodes", "10000", quiet=True) as server:
                results[size]["HTTP"] = asyncio.run(bench_http(server, env, calls, max(3, rounds // 3)))
            errors += sum(r["errors"] for r in results[size].values())
        print(f"p50 / p99 {'':<22} {sizes['small']:>10,} rows {'':>12} {sizes['large']:>10,} rows")
        for path in ("in process", "stdio", "HTTP"):
            for what in ("create", "reset", "read", "write", "update"):
                small, large = results["small"][path].get(what, []), results["large"][path].get(what, [])
                if small or large:
                    print(f"  {what + ', ' + path:<28} {cell(small)}   {cell(large)}")
        for what in ("write", "update"):
            small, large = results["small"]["in process"][what], results["large"]["in process"][what]
            if small and large:
                print(f"  {what} cost at {sizes['large']:,} rows / at {sizes['small']} rows (in process, p50): "
                      f"{statistics.median(large) / statistics.median(small):.2f}x")
        own = results["small"]["in process"]["own"]
        if own:
            print(f"  the runtime's own part of a call (call time minus the tool's own code and queries, in process): "
                  f"{cell(own).strip()}")
        print("  (update: the writes whose tests only update rows by key, so the tool's own work does not grow "
              "with the tables; the other writes find the next id by scanning keys)")
        print(f"  runtime errors during latency runs: {errors}")

        confined, bare = confinement_cost(domain, calls, rounds)
        per_call = statistics.median(confined["read"] + confined["write"]) - statistics.median(bare["read"] + bare["write"])
        per_episode = statistics.median(confined["create"]) - statistics.median(bare["create"])
        print(f"confinement (Landlock + seccomp + limits per episode process): {per_episode * 1e3:+.3f} ms per episode, "
              f"{per_call * 1e3:+.3f} ms per call (p50, confined minus unconfined)")

        memory_report(domain, live, calls, max(1, live // 8))

        print("throughput (rollouts of reset + workload, 3 s each, in process):")
        for episodes in (1, 16, 256):
            local = asyncio.run(throughput_in_process(env, calls, episodes, 3.0))
            print(f"  {episodes:>3} episodes {local['calls'] / local['wall']:8.0f} calls/s ({local['errors']} errors)")

        print("anchors (same calls and states; anchor time / ours):")
        ours = results["small"]["in process"]
        sub = anchor_subprocess(env, calls, sample)
        print(f"  tool call: subprocess + pickled state  {ratio(sub, ours['read'] + ours['write'])}")
        deepcopy = anchor_deepcopy(env.spec.db, sample, 300)
        print(f"  reset, {sizes['small']} rows: pydantic deepcopy   {ratio(deepcopy, ours['reset'])}")
        print(f"  reset, {sizes['large']:,} rows: pydantic deepcopy "
              f"{ratio(anchor_deepcopy(env.spec.db, big, 20), results['large']['in process']['reset'])}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.runtime")
    parser.add_argument("--domain", default="job_seeking", help="a domain name under domains/, or a path")
    parser.add_argument("--live", type=int, default=1000, help="live episodes for the memory figure")
    options = parser.parse_args()
    main(options.domain, options.live)
