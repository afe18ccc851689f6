"""The episode runtime: reset, tool-call latency in process, over stdio and over HTTP, reward
time, throughput with 1, 16 and 256 concurrent episodes, and the two designs the anchors use.

The workload is the domain's own: every success procedural test whose initial state is part
of the sample state gives one call, run in order on an episode of the sample state. Anchors,
each timed on the same calls and states:
  subprocess  a fresh process per call, the state pickled in and out (CodeGym)
  deepcopy    a pydantic model of the database, deep-copied per reset (tau2-bench)
Aims: reset < 1 ms, in-process call p50 < 1 ms, HTTP call p50 < 5 ms, 256 episodes, no errors.

    python -m bench.runtime [--domain NAME_OR_PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import pickle
import re
import socket
import statistics
import subprocess
import sys
import time
from datetime import date, datetime
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field, create_model

from domains.spec import DBSchema, State, ToolTest
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


def line(label: str, seconds: list[float], unit: str = "ms") -> str:
    p50, p99 = percentiles(seconds)
    return f"  {label:<34} p50 {p50:8.3f} {unit}   p99 {p99:8.3f} {unit}   (n={len(seconds)})"


# -- in process ---------------------------------------------------------------------------

def bench_in_process(env: Environment, calls: list[tuple[str, dict]], rounds: int) -> dict:
    episode = env.create_episode()
    call_times, errors = [], 0
    for _ in range(rounds):
        episode.reset()
        for tool, arguments in calls:
            out = episode.call(tool, arguments)
            call_times.append(out.seconds)
            errors += (not out.ok and out.error_type in INFRA_ERRORS)
    reset_times = []
    for _ in range(rounds * 10):
        if calls:
            episode.call(*calls[-1])
        started = time.perf_counter()
        episode.reset()
        reset_times.append(time.perf_counter() - started)
    create_times = []
    for _ in range(50):
        started = time.perf_counter()
        extra = env.create_episode()
        create_times.append(time.perf_counter() - started)
        extra.close()
    episode.close()
    return {"call": call_times, "reset": reset_times, "create": create_times, "errors": errors}


def bench_reward(env: Environment, calls: list[tuple[str, dict]]) -> tuple[str, list[float]]:
    """Reward time: a real task when the domain has one, else the workload's end state scored against itself."""
    from verification.reward import compute_reward

    from mcp_servers.runtime import RewardUnavailable

    times = []
    for task_id in env.task_ids():
        episode = env.create_episode(task_id)
        for call in env.task(task_id).reference_solution:
            episode.call(call.tool, call.arguments)
        try:
            episode.reward()  # the first reward runs the reference solution once: not a per-episode cost
        except RewardUnavailable:
            episode.close()
            continue
        for _ in range(30):
            started = time.perf_counter()
            episode.reward()
            times.append(time.perf_counter() - started)
        episode.close()
        return f"reward (task {task_id}, dump + diff)", times
    episode = env.create_episode()
    initial = episode.state()
    for tool, arguments in calls:
        episode.call(tool, arguments)
    expected = episode.state()
    for _ in range(30):
        started = time.perf_counter()
        compute_reward(env.spec.db, initial, episode.state(), expected)
        times.append(time.perf_counter() - started)
    episode.close()
    return "reward (sample workload, dump + diff)", times


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
                try:
                    out = await episode.acall(tool, arguments)
                    errors[n] += (not out.ok and out.error_type in INFRA_ERRORS)
                except Exception:
                    errors[n] += 1
                counts[n] += 1

    started = time.perf_counter()
    await asyncio.gather(*(rollouts(n) for n in range(episodes)))
    wall = time.perf_counter() - started
    for episode in opened:
        episode.close()
    return {"calls": sum(counts), "wall": wall, "errors": sum(errors)}


# -- over MCP -----------------------------------------------------------------------------

def _is_infra_error(result) -> bool:
    return result.is_error and any(f"({kind})" in result.content[0].text for kind in INFRA_ERRORS)


async def bench_stdio(domain: Path, calls: list[tuple[str, dict]], rounds: int) -> tuple[list[float], int]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_servers", str(domain)], cwd=str(ROOT),
                                   env=dict(os.environ))
    times, errors = [], 0
    async with Client(params) as client:
        for _ in range(rounds):
            for tool, arguments in calls:
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                times.append(time.perf_counter() - started)
                errors += _is_infra_error(result)
    return times, errors


class HttpServer:
    def __init__(self, domain: Path, workers: int):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_servers", str(domain), "--transport", "http", "--port", str(self.port),
             "--workers", str(workers), "--max-calls", "0"], cwd=ROOT, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/health").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        self.close()
        raise RuntimeError("the HTTP server did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


async def bench_http(server: HttpServer, calls: list[tuple[str, dict]], rounds: int) -> dict:
    from mcp import Client

    async with httpx.AsyncClient(base_url=server.base, timeout=60) as api:
        episode = (await api.post("/episodes")).json()
        times, errors = [], 0
        async with Client(episode["mcp_url"]) as client:
            for _ in range(rounds):
                await api.post(f"/episodes/{episode['episode_id']}/reset")
                for tool, arguments in calls:
                    started = time.perf_counter()
                    result = await client.call_tool(tool, arguments)
                    times.append(time.perf_counter() - started)
                    errors += _is_infra_error(result)
        per_session = []
        for tool, arguments in (calls * 3)[:30]:
            started = time.perf_counter()
            async with Client(episode["mcp_url"]) as client:
                await client.call_tool(tool, arguments)
            per_session.append(time.perf_counter() - started)
        await api.delete(f"/episodes/{episode['episode_id']}")
    return {"call": times, "session_per_call": per_session, "errors": errors}


async def throughput_http(server: HttpServer, calls: list[tuple[str, dict]], episodes: int, seconds: float) -> dict:
    from mcp import Client

    limits = httpx.Limits(max_connections=episodes + 8, max_keepalive_connections=episodes + 8)
    async with httpx.AsyncClient(base_url=server.base, timeout=120, limits=limits) as api:
        created = await asyncio.gather(*(api.post("/episodes") for _ in range(episodes)))
        opened = [r.json() for r in created]
        counts, errors = [0] * episodes, [0] * episodes
        ready = asyncio.Event()
        deadline = [0.0]

        async def rollouts(n: int) -> None:
            async with Client(opened[n]["mcp_url"], read_timeout_seconds=120) as client:
                await ready.wait()
                while time.perf_counter() < deadline[0]:
                    await api.post(f"/episodes/{opened[n]['episode_id']}/reset")
                    for tool, arguments in calls:
                        try:
                            result = await client.call_tool(tool, arguments)
                            errors[n] += _is_infra_error(result)
                        except Exception:
                            errors[n] += 1
                        counts[n] += 1

        tasks = [asyncio.create_task(rollouts(n)) for n in range(episodes)]
        await asyncio.sleep(min(10.0, 0.5 + episodes * 0.04))  # let every session connect first
        started = time.perf_counter()
        deadline[0] = started + seconds
        ready.set()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        wall = time.perf_counter() - started
        failed_sessions = sum(isinstance(o, BaseException) for o in outcomes)
        await asyncio.gather(*(api.delete(f"/episodes/{e['episode_id']}") for e in opened))
    return {"calls": sum(counts), "wall": wall, "errors": sum(errors) + failed_sessions}


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
                    elif c.unique and isinstance(value, str):
                        new[c.name] = f"{i}-{value}"
                out[name].append(new)
    return out


# -- report -------------------------------------------------------------------------------

def ratio(anchor: list[float], ours: list[float]) -> str:
    a, o = statistics.median(anchor), statistics.median(ours)
    return f"{a * 1e3:10.3f} ms vs {o * 1e3:8.3f} ms  -> {a / o:8.1f}x"


def main(name: str = "job_seeking", workers: int | None = None) -> None:
    try:
        domain = resolve_domain(name)
    except FileNotFoundError as error:
        print(f"runtime bench: {error}")
        return
    workers = workers or os.cpu_count() or 1
    with Environment(domain, workers=workers, max_calls=None, max_episodes=10_000) as env:
        sample = env.initial_state()
        calls = workload(env, sample)
        rows = sum(len(v) for v in sample.values())
        print(f"domain {env.name}: {len(env.tools)} tools, sample state {rows} rows, workload {len(calls)} calls "
              f"({', '.join(t for t, _ in calls)}), {workers} sandbox workers")
        if not calls:
            print("  no success test runs on the sample state: nothing to measure")
            return

        measured = bench_in_process(env, calls, rounds=max(3, 300 // len(calls)))
        print(line("reset (template deserialize)", measured["reset"]))
        print(line("create episode", measured["create"]))
        print(line("tool call, in process", measured["call"]))
        stdio, stdio_errors = asyncio.run(bench_stdio(env.dir, calls, rounds=max(2, 150 // len(calls))))
        print(line("tool call, MCP over stdio", stdio))
        server = HttpServer(env.dir, workers)
        try:
            http = asyncio.run(bench_http(server, calls, rounds=max(2, 150 // len(calls))))
            print(line("tool call, MCP over HTTP", http["call"]))
            print(line("  new MCP session per call", http["session_per_call"]))
            label, reward_times = bench_reward(env, calls)
            print(line(label, reward_times))

            print("throughput (rollouts of reset + workload, 3 s each):")
            for episodes in (1, 16, 256):
                local = asyncio.run(throughput_in_process(env, calls, episodes, 3.0))
                remote = asyncio.run(throughput_http(server, calls, episodes, 3.0))
                print(f"  {episodes:>3} episodes   in process {local['calls'] / local['wall']:8.0f} calls/s "
                      f"({local['errors']} errors)   HTTP {remote['calls'] / remote['wall']:7.0f} calls/s "
                      f"({remote['errors']} errors)")
        finally:
            server.close()
        errors = measured["errors"] + stdio_errors + http["errors"]
        print(f"  runtime errors during latency runs: {errors}")

        print("anchors (same calls and states; anchor time / ours):")
        sub = anchor_subprocess(env, calls, sample)
        ours_rollout = statistics.median(measured["reset"]) + statistics.median(measured["call"]) * len(calls)
        print(f"  tool call: subprocess + pickled state  {ratio(sub, measured['call'])}")
        print(f"  rollout (reset + {len(calls)} calls): subprocess   "
              f"{ratio([statistics.median(sub) * len(calls)], [ours_rollout])}")
        print(f"  reset, sample state ({rows} rows): pydantic deepcopy "
              f"{ratio(anchor_deepcopy(env.spec.db, sample, 300), measured['reset'])}")
        big = scaled_state(env.spec.db, sample, 5_000)
        big_rows = sum(len(v) for v in big.values())
        try:
            episode = env.create_episode(state=big)
        except Exception as error:  # noqa: BLE001 - a state the generic scaler cannot make valid
            print(f"  reset, scaled state: skipped ({error})")
            return
        big_resets = []
        for _ in range(100):
            episode.call(*calls[-1])
            started = time.perf_counter()
            episode.reset()
            big_resets.append(time.perf_counter() - started)
        episode.close()
        print(f"  reset, scaled state ({big_rows} rows): pydantic deepcopy "
              f"{ratio(anchor_deepcopy(env.spec.db, big, 20), big_resets)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.runtime")
    parser.add_argument("--domain", default="job_seeking", help="a domain name under domains/, or a path")
    parser.add_argument("--workers", type=int, help="sandbox workers (default: cores)")
    options = parser.parse_args()
    main(options.domain, options.workers)
