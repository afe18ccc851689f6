"""Many episodes: every task K times at a given concurrency, resumable, written as SFT-ready JSONL.

runs/<domain>/<run id>/
    run.json            the configuration (a resumed run must match it)
    trajectories.jsonl  one Trajectory per finished episode, appended as each one ends
    transcript.jsonl    every model exchange of the run (model runs), replayable
    report.md/.json     average reward, pass^k overall, per complexity level and per task kind
    pass_k.svg, levels.svg, rewards.svg   the pass^k curves, per-level bars, reward histogram
Interrupting loses only the episodes in flight; running the same command again skips the
episodes already in trajectories.jsonl.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from domains.task_model import Task, task_ids
from llm import LLM, StepKey, Transcript, backend_for, model_for
from mcp_servers.control_token import TOKEN_ENV
from mcp_servers.http_process import Served, http_server
from mcp_servers.runtime import Environment, resolve_domain
from rollouts.agents import Agent, ForbiddenAgent, LLMAgent, NoopAgent, ReferenceAgent
from rollouts.episode import run_episode
from rollouts.report import write_report
from rollouts.sessions import InProcessSession, MCPSession, Session, read_policy
from rollouts.trajectory import Limits, Trajectory
from rollouts.user import InstructionUser, LLMUser, User

BUILTIN = ("reference", "noop", "forbidden", "replay")


@dataclass
class EvalConfig:
    domain: str
    agent: str = "llm"  # reference | noop | replay | llm (needs model)
    model: str | None = None
    user_model: str | None = None
    tool_calling: str = "auto"  # the LLM agent's: auto | native | json (rollouts.agents.LLMAgent)
    k: int = 4
    concurrency: int = 16
    limits: Limits = field(default_factory=Limits)
    via: str = "inprocess"  # inprocess | mcp
    url: str | None = None  # an MCP server already running (via mcp); else one is started
    token: str | None = None  # that server's control token; default: $WORLDSMITH_CONTROL_TOKEN
    tasks: list[str] | None = None
    run_id: str | None = None
    runs_dir: Path = Path("runs")
    workers: int | None = None

    def identity(self, user: str, domain: str) -> dict:
        """What a resumed run must share with the run it continues."""
        return {"domain": domain, "agent": self.agent, "model": self.model, "user": user,
                "user_model": self.user_model or self.model, "tool_calling": self.tool_calling, "k": self.k,
                "via": self.via,
                "limits": self.limits.model_dump()}


class RunMismatch(ValueError):
    """The run folder holds a run with another configuration."""


def replay_transcript(domain_dir: Path) -> Path:
    return domain_dir / "rollouts" / "transcript.jsonl"


def replay_rewards(domain_dir: Path) -> dict[str, float]:
    """The reward each recorded rollout earned when it was recorded: replay must earn the same."""
    path = domain_dir / "rollouts" / "rewards.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in text).strip("-")


def default_run_id(config: EvalConfig) -> str:
    parts = [config.agent] + ([_safe(config.model)] if config.model else []) + [f"k{config.k}"]
    return "-".join(parts) + ("-mcp" if config.via == "mcp" else "")


@dataclass
class Players:
    agent: Agent
    user: User
    tasks: list[str] | None  # the tasks this agent can play (replay: the recorded ones)
    transcript: Transcript | None = None  # recorded to the run folder (model runs)
    llms: tuple[LLM, ...] = ()
    models: dict[str, str] | None = None  # the model of each role (model runs): AGENT_MODEL, USER_MODEL

    def changed_prompts(self) -> int:
        """Replayed steps whose recorded prompt differs from the one asked now."""
        return sum(len(set(llm.changed_prompts)) for llm in set(self.llms))


def players(config: EvalConfig, domain_dir: Path, run_dir: Path, executor) -> Players:
    if config.agent == "reference":
        return Players(ReferenceAgent(), InstructionUser(), None)
    if config.agent == "noop":
        return Players(NoopAgent(), InstructionUser(), None)
    if config.agent == "forbidden":
        return Players(ForbiddenAgent(), InstructionUser(), None)
    if config.agent == "replay":
        path = replay_transcript(domain_dir)
        if not path.is_file():
            raise FileNotFoundError(f"{domain_dir.name} has no recorded rollouts (rollouts/transcript.jsonl in its folder)")
        llm = LLM(None, Transcript(path))
        recorded = sorted({e["item"].rsplit("@", 1)[0] for e in llm.transcript.entries.values()})
        return Players(LLMAgent(llm, "replay", executor, fixed_trial=0),
                       LLMUser(llm, domain_dir.name, "replay-user", executor, fixed_trial=0), recorded, llms=(llm,))
    if not config.model:
        raise ValueError("the llm agent needs a model: MODEL=<litellm model> (or AGENT=reference|noop|replay)")
    transcript = Transcript(run_dir / "transcript.jsonl")
    agent_llm = LLM(backend_for(config.model), transcript, concurrency=config.concurrency)
    user_llm = LLM(backend_for(config.user_model or config.model), transcript, concurrency=config.concurrency)
    models = {"agent": model_for(agent_llm.backend, StepKey("agent")),
              "user": model_for(user_llm.backend, StepKey("user"))}
    return Players(LLMAgent(agent_llm, "llm", executor, tool_calling=config.tool_calling),
                   LLMUser(user_llm, domain_dir.name, "llm-user", executor), None, transcript, (agent_llm, user_llm),
                   models)


def load_done(path: Path) -> list[dict]:
    """The finished episodes; a line cut short by an interruption is dropped (its episode reruns)."""
    if not path.is_file():
        return []
    records, good = [], []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
            good.append(line)
        except ValueError:
            continue
    path.write_text("".join(f"{line}\n" for line in good))
    return records


def mcp_server(domain_dir: Path, workers: int | None, *options: str):
    """`python -m rollouts.serve <domain>` (the HTTP MCP server with the simulated user's route;
    `options`: its --user-* options) on a free local port with a fresh control token, until the
    block ends: a `Served` (url, token)."""
    return http_server(domain_dir, "--max-calls", "0", *options, *(["--workers", str(workers)] if workers else []),
                       module="rollouts.serve")


class Progress:
    """episodes done / total, running average reward, tokens: one line, redrawn (tqdm)."""

    def __init__(self, total: int, done: list[dict], label: str):
        from tqdm import tqdm

        self.rewards = [r["reward"] for r in done]
        self.tokens = sum(r["tokens"][role][p] for r in done for role in ("agent", "user")
                          for p in ("prompt", "completion"))
        self.errors = sum(1 for r in done if r["error"])
        self.bar = tqdm(total=total, initial=len(done), desc=label, unit="ep", file=sys.stderr,
                        mininterval=0.5, dynamic_ncols=True)
        self._postfix()

    def _postfix(self) -> None:
        average = sum(self.rewards) / len(self.rewards) if self.rewards else 0.0
        self.bar.set_postfix_str(f"avg reward {average:.3f}, tokens {self.tokens:,}, errors {self.errors}",
                                 refresh=False)

    def add(self, trajectory: Trajectory) -> None:
        self.rewards.append(trajectory.reward)
        self.tokens += sum(u.total for u in trajectory.tokens.values())
        self.errors += bool(trajectory.error)
        self._postfix()
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


async def play_all(open_session: Callable[[str], Awaitable[Session]], agent: Agent, user: User,
                   todo: list[tuple[str, int]], concurrency: int, limits: Limits,
                   on_done: Callable[[Trajectory], None]) -> None:
    """Every (task, trial) of `todo`, at most `concurrency` at once; `on_done` gets each trajectory."""
    slots = asyncio.Semaphore(concurrency)

    async def one(task_id: str, trial: int) -> None:
        async with slots:
            session = await open_session(task_id)
            try:
                trajectory = await run_episode(session, agent, user, trial=trial, limits=limits)
            finally:
                await session.close()
        on_done(trajectory)

    await asyncio.gather(*(one(t, i) for t, i in todo))


async def _run_all(config: EvalConfig, env: Environment | None, server: Served | None, play: Players,
                   todo: list[tuple[str, int]], out, progress: Progress, policy: str) -> None:
    import httpx

    http = httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=max(config.concurrency, 10)))

    async def open_session(task_id: str) -> Session:
        if server is None:
            return await InProcessSession.open(env, task_id)
        return await MCPSession.open(server.url, task_id, http=http, policy=policy, token=server.token)

    saved = time.monotonic()

    def done(trajectory: Trajectory) -> None:
        nonlocal saved
        out.write(trajectory.jsonl() + "\n")
        out.flush()
        progress.add(trajectory)
        if play.transcript is not None and time.monotonic() - saved > 5:  # the whole file is rewritten
            play.transcript.save()
            saved = time.monotonic()

    try:
        await play_all(open_session, play.agent, play.user, todo, config.concurrency, config.limits, done)
    finally:
        await http.aclose()
        if play.transcript is not None:
            play.transcript.save()


def evaluate(config: EvalConfig) -> tuple[Path, dict]:
    """Run (or resume) an evaluation; returns the run folder and report.json's content."""
    domain_dir = resolve_domain(config.domain)
    run_dir = config.runs_dir / domain_dir.name / (config.run_id or default_run_id(config))
    executor = ThreadPoolExecutor(max(4, 2 * config.concurrency), thread_name_prefix="rollouts-llm")
    play = players(config, domain_dir, run_dir, executor)
    run_dir.mkdir(parents=True, exist_ok=True)
    identity = config.identity(play.user.name, domain_dir.name)
    if play.models:
        identity["models"] = play.models
    saved = run_dir / "run.json"
    if saved.is_file() and json.loads(saved.read_text()) != json.loads(json.dumps(identity)):
        raise RunMismatch(f"{run_dir} holds a run with another configuration ({saved.read_text().strip()}); "
                          f"choose another RUN_ID or remove that folder")
    saved.write_text(json.dumps(identity, indent=1, sort_keys=True) + "\n")

    tasks = task_ids(domain_dir)
    if config.tasks is not None:
        tasks = [t for t in tasks if t in set(config.tasks)]
    if play.tasks is not None:
        tasks = [t for t in tasks if t in set(play.tasks)]
    path = run_dir / "trajectories.jsonl"
    done = [r for r in load_done(path) if r["task_id"] in set(tasks)]
    finished = {(r["task_id"], r["trial"]) for r in done}
    todo = [(t, i) for t in tasks for i in range(config.k) if (t, i) not in finished]
    label = f"{domain_dir.name} {config.agent}"
    progress = Progress(len(tasks) * config.k, done, label)
    try:
        with open(path, "a") as out, contextlib.ExitStack() as stack:
            if todo:
                env = server = None
                if config.via == "mcp" and config.url:
                    server = Served(config.url, config.token or os.environ.get(TOKEN_ENV, ""))  # "": 401 says why
                elif config.via == "mcp":
                    server = stack.enter_context(mcp_server(domain_dir, config.workers))
                else:
                    env = stack.enter_context(Environment(domain_dir, workers=config.workers, max_calls=None))
                asyncio.run(_run_all(config, env, server, play, todo, out, progress, read_policy(domain_dir)))
    finally:
        progress.close()
        executor.shutdown(wait=False, cancel_futures=True)
    records = [r for r in load_done(path) if r["task_id"] in set(tasks)]
    config_seen = {**identity, "run_id": run_dir.name, "tasks_skipped": _skipped(play, domain_dir),
                   "changed_prompts": play.changed_prompts()}
    summary = write_report(records, config_seen, run_dir, task_groups(domain_dir, tasks))
    return run_dir, summary


def task_groups(domain_dir: Path, tasks: list[str]) -> dict[str, dict[str, str]]:
    """Each task's complexity level, mode (single_turn or conversational, under "kind") where its file
    says, and task kind (change, answer or refusal)."""
    levels, modes, kinds = {}, {}, {}
    for task_id in tasks:
        task = Task.model_validate_json((domain_dir / "tasks" / f"{task_id}.json").read_text())
        if task.metadata is not None:
            levels[task_id] = str(task.metadata.complexity_level)
        if task.mode:
            modes[task_id] = task.mode
        kinds[task_id] = task.kind
    return {"level": levels, "kind": modes, "task_kind": kinds}


def _skipped(play: Players, domain_dir: Path) -> list[str]:
    """Recorded tasks (replay) the domain does not have."""
    if play.tasks is None:
        return []
    known = set(task_ids(domain_dir))
    return [t for t in play.tasks if t not in known]
