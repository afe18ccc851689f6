"""Episodes of a verified domain, in process: the API an RL trainer uses without a network hop.

    from mcp_servers.runtime import Environment

    with Environment("job_seeking") as env:               # starts the template process
        tools = env.openai_tools()                         # OpenAI function schemas of the verified tools
        episode = env.create_episode(env.task_ids()[0])    # an isolated DB from the task's initial state
        out = episode.call("search_apps_by_keyword", {"keyword": "engineer"})
        print(out.ok, out.text)                            # the JSON result, or the error the agent sees
        # from asyncio code: out = await episode.acall("search_apps_by_keyword", {...})
        print(episode.reward()["reward"])                  # state-diff reward against the reference run
        episode.reset()                                    # back to the initial state, in microseconds
        episode.close()

An episode is one process, forked from a warm template and confined before any generated code
runs, holding one SQLite database file; a tool call is one transaction the runtime owns, so a
call that raises, times out or kills its process leaves the state as it was, and a process that
dies for any reason is replaced on the same files (see pool.py). The server process validates
arguments and counts calls; generated code never runs in it.
Without a task, an episode starts from the domain's sample state (sample_state.json, or one
assembled from the procedural tests).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from domains import registry
from domains.db_runtime import DEFAULT_NOW
from domains.policy import described
from domains.spec import DomainSpec, State, ToolSchema
from domains.task_model import INDEX_FILE, Task, task_ids
from domains.tool_schemas import ArgumentError, ArgumentValidator, openai_function, overwrites
from mcp_servers.pool import EpisodeProcesses, PoolError
from mcp_servers.sample_state import build_sample_state
from verification.procedural import tool_sources

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
SAMPLE = "sample"


class EpisodeError(RuntimeError):
    """The episode cannot serve the request (closed, unknown, or its worker failed)."""


class UnknownTask(LookupError):
    """The domain has no such task."""


class RewardUnavailable(RuntimeError):
    """No reward can be computed for this episode; the message says why."""


@dataclass
class CallResult:
    """One tool call's outcome: the tool's JSON result, or an error meant for the agent."""

    ok: bool
    result: Any = None
    error: str | None = None
    error_type: str | None = None
    seconds: float = 0.0
    tool_seconds: float | None = None  # the tool's own part of `seconds` (its code and queries)

    @property
    def text(self) -> str:
        if self.ok:
            return json.dumps(self.result, ensure_ascii=False)
        return f"Error ({self.error_type}): {self.error}"

    def as_dict(self) -> dict:
        return {"ok": self.ok, "result": self.result, "error": self.error, "error_type": self.error_type}


def resolve_domain(domain: str | Path) -> Path:
    """A domain folder from a name under the domains root (domains.registry) or a path to one."""
    return registry.resolve(domain)


@dataclass
class _Template:
    initial: State
    now: str | None
    task: Task | None


class Environment:
    """A verified domain served as episodes, one process each; thread-safe.

    `workers` is accepted for compatibility and ignored: every episode has its own process.
    `unsafe_unconfined=True` runs them without any confinement (for measuring what it costs).
    `disk_mb` caps what each episode's files may hold (its directory is a tmpfs of its own where
    the server runs as root); by default twice the database's file size limit.
    `max_processes` bounds the episode processes running at once: past it the least recently used
    idle episodes give up theirs (their files keep every commit) and start a new one at their next
    request, so many live episodes cost their files and a bounded number of processes.
    """

    def __init__(self, domain: str | Path, *, workers: int | None = None, call_timeout: float = 5.0,
                 max_calls: int | None = 200, max_string_chars: int = 32_768, max_argument_bytes: int = 262_144,
                 max_episodes: int = 4096, idle_timeout: float | None = None, memory_mb: int = 1024,
                 max_result_bytes: int = 1 << 20, disk_mb: int | None = None, max_processes: int | None = None,
                 unsafe_unconfined: bool = False, serve: bool = True):
        self.dir = resolve_domain(domain)
        self.spec = DomainSpec.model_validate_json((self.dir / "spec.json").read_text())
        self.name = self.spec.name
        self.call_timeout, self.max_calls, self.max_episodes = call_timeout, max_calls, max_episodes
        self.idle_timeout = idle_timeout  # episodes unused this long are closed when new ones are made
        verified = set(json.loads((self.dir / "report.json").read_text())["tools"]["verified"])
        sources = {n: s for n, s in tool_sources(self.dir).items() if n in verified}
        self.tools: dict[str, ToolSchema] = {t.name: t for t in sorted(self.spec.tools, key=lambda t: t.name)
                                             if t.name in sources}
        self.validators = {n: ArgumentValidator(t, max_string_chars, max_argument_bytes) for n, t in self.tools.items()}
        # What the agent reads: each description ends with the tool's preconditions ("Requires: ..."),
        # and the domain's policy.md (its description when it has none) opens every episode.
        self.descriptions = {n: described(t.description, self.spec.requirements(n)) for n, t in self.tools.items()}
        policy = self.dir / "policy.md"
        self.policy = policy.read_text() if policy.is_file() else ""
        self.instructions = self.policy or self.spec.description
        # serve=False: the domain's tools and tasks only, no episode processes here (a front for
        # episodes served elsewhere: mcp_servers.ray_service)
        self.pool = EpisodeProcesses((self.dir / "db.py").read_text(), {n: sources[n] for n in self.tools},
                                     memory_mb=memory_mb, max_result_bytes=max_result_bytes, disk_mb=disk_mb,
                                     max_episodes=max_episodes + 1, max_processes=max_processes,
                                     unsafe_unconfined=unsafe_unconfined) if serve else None
        # Threads for asynchronous calls: each waits on its episode's process, off the event loop.
        self._async = ThreadPoolExecutor(64, thread_name_prefix="worldsmith-call")
        self._lock = threading.RLock()
        self._reference_lock = threading.Lock()  # reference runs may be slow: not under _lock
        self._templates: dict[str, _Template] = {}
        self._expected: dict[str, State] = {}
        self._episodes: dict[str, Episode] = {}

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            episodes = list(self._episodes.values())
        for episode in episodes:
            episode.close()
        self._async.shutdown(wait=False, cancel_futures=True)
        if self.pool is not None:
            self.pool.close()

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def health(self) -> dict:
        """ok is false while an episode process is being replaced or the template is down."""
        restoring = self.pool.restoring()
        return {"ok": restoring == 0 and self.pool.template_alive(), "restoring": restoring,
                "restarts": self.pool.restarts}

    # -- what the agent sees -------------------------------------------------------------
    def overwrites(self, tool: str) -> bool:
        """Whether the tool's verified tests show it updating or deleting rows."""
        path = self.dir / "tests" / f"{tool}.json"
        return path.is_file() and overwrites(json.loads(path.read_text()))

    def openai_tools(self) -> list[dict]:
        return [openai_function(t, self.descriptions[n]) for n, t in self.tools.items()]

    # -- tasks ---------------------------------------------------------------------------
    def task_ids(self) -> list[str]:
        return task_ids(self.dir)

    def task(self, task_id: str) -> Task:
        if not SAFE_ID.match(task_id):
            raise UnknownTask(f"{task_id!r} is not a task id")
        path = self.dir / "tasks" / f"{task_id}.json"
        if not path.is_file() or path.name == INDEX_FILE:
            raise UnknownTask(f"domain {self.name} has no task {task_id!r}")
        return Task.model_validate_json(path.read_text())

    def sample_state(self) -> State:
        path = self.dir / "sample_state.json"
        return json.loads(path.read_text()) if path.is_file() else build_sample_state(self.dir)

    def _template(self, task_id: str | None, state: State | None = None) -> tuple[str, _Template]:
        if state is not None:  # any state, keyed by content so that equal states share a template
            key = "state:" + hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()[:24]
        else:
            key = SAMPLE if task_id is None else f"task:{task_id}"
        with self._lock:
            if key not in self._templates:
                task = None if task_id is None else self.task(task_id)
                if state is None:
                    state = self.sample_state() if task is None else task.initial_state
                try:
                    initial = self.pool.add_template(key, state)
                except PoolError as error:
                    what = ("the given state" if key.startswith("state:") else
                            "the sample state" if task is None else f"task {task_id}'s initial_state")
                    raise EpisodeError(f"{what} does not fit the {self.name} database: {error}") from None
                self._templates[key] = _Template(initial, task.now if task else None, task)
            return key, self._templates[key]

    def initial_state(self, task_id: str | None = None) -> State:
        return self._template(task_id)[1].initial

    # -- episodes ------------------------------------------------------------------------
    def create_episode(self, task_id: str | None = None, episode_id: str | None = None, *,
                       state: State | None = None, restore_from: str | None = None) -> Episode:
        """A new isolated episode from a task's initial state, the sample state, or a given state.

        An episode from a given state has no task, hence no reward; it suits data generation
        and testing tools against a particular database. Its template is kept while the
        environment lives, shared by every episode of an equal state. `restore_from`: the folder
        of an episode of the same task whose process is gone (another pool's, on this machine or
        on shared storage); the new episode starts from that episode's last committed state.
        """
        if task_id is not None and state is not None:
            raise EpisodeError("give a task or a state, not both")
        key, template = self._template(task_id, state)
        self.close_idle()
        episode_id = episode_id or secrets.token_hex(8)
        if not SAFE_ID.match(episode_id):
            raise EpisodeError(f"{episode_id!r} is not a valid episode id (letters, digits, _ . -)")
        with self._lock:
            if episode_id in self._episodes:
                raise EpisodeError(f"episode {episode_id!r} already exists")
            if len(self._episodes) >= self.max_episodes:
                raise EpisodeError(f"{self.max_episodes} episodes are open; close some first")
            episode = Episode(self, episode_id, key, template, self.max_calls)
            self._episodes[episode_id] = episode
        try:
            self.pool.create(episode_id, key, template.now, files=restore_from)
        except BaseException:
            with self._lock:
                self._episodes.pop(episode_id, None)
            raise
        return episode

    def get_episode(self, episode_id: str) -> Episode:
        with self._lock:
            episode = self._episodes.get(episode_id)
        if episode is None:
            raise EpisodeError(f"episode {episode_id!r} does not exist or was closed")
        return episode

    def episodes(self) -> list[Episode]:
        with self._lock:
            return list(self._episodes.values())

    def close_idle(self) -> list[str]:
        """Close the episodes nobody used for `idle_timeout` seconds (a trainer that crashed)."""
        if not self.idle_timeout:
            return []
        cutoff = time.monotonic() - self.idle_timeout
        stale = [e for e in self.episodes() if e.last_used < cutoff]
        for episode in stale:
            episode.close()
        return [e.id for e in stale]

    def _forget(self, episode_id: str) -> None:
        with self._lock:
            self._episodes.pop(episode_id, None)

    # -- ground truth --------------------------------------------------------------------
    def expected_state(self, task_id: str) -> State:
        """The state the task's reference solution leaves, run once on a fresh episode and kept."""
        with self._reference_lock:
            if task_id in self._expected:
                return self._expected[task_id]
            task = self.task(task_id)
            key, template = self._template(task_id)
            reference = Episode(self, f"reference-{secrets.token_hex(6)}", key, template, None)
            self.pool.create(reference.id, key, template.now)
            try:
                for step, call in enumerate(task.reference_solution, 1):
                    out = reference.call(call.tool, call.arguments)
                    if not out.ok:
                        raise RewardUnavailable(f"task {task_id}'s reference solution fails at step {step} "
                                                f"({call.tool}): {out.error_type}: {out.error}")
                expected = reference.state()
            finally:
                reference.close()
            self._expected[task_id] = expected
            return expected


def _reward_function():
    try:
        from verification.reward import task_reward
    except ImportError as error:
        raise RewardUnavailable(f"the reward module is not available: {error}") from None
    return task_reward


@dataclass(eq=False)
class Episode:
    """One isolated database and its call budget. Methods are safe to call from several threads."""

    env: Environment
    id: str
    key: str
    template: _Template
    max_calls: int | None
    calls: int = 0
    closed: bool = False
    last_used: float = field(default_factory=time.monotonic)
    # (tool, arguments) of every call that reached a tool since the last reset, refused ones too:
    # a refusal task's reward asks whether the forbidden call was made.
    made: list[tuple[str, dict]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def task(self) -> Task | None:
        return self.template.task

    @property
    def task_id(self) -> str | None:
        return self.task.id if self.task else None

    @property
    def now(self) -> str:
        """The episode clock the tools read: the task's `now`, else the DB layer's default."""
        return self.template.now or DEFAULT_NOW

    def info(self) -> dict:
        return {"episode_id": self.id, "domain": self.env.name, "task_id": self.task_id, "calls": self.calls,
                "max_calls": self.max_calls, "call_timeout_s": self.env.call_timeout, "closed": self.closed,
                "now": self.now}

    def _check_open(self) -> None:
        if self.closed:
            raise EpisodeError(f"episode {self.id!r} is closed")

    def call(self, tool: str, arguments: dict | None = None) -> CallResult:
        """Run one tool call; every failure comes back as a result with a clear error. The call
        timeout covers waiting for the episode's previous call."""
        started = time.perf_counter()
        with self._lock:
            self._check_open()
            self.last_used = time.monotonic()
            if self.max_calls is not None and self.calls >= self.max_calls:
                return CallResult(False, error=f"this episode has used all {self.max_calls} of its tool calls",
                                  error_type="CallLimit")
            self.calls += 1
        validator = self.env.validators.get(tool)
        if validator is None:
            known = ", ".join(self.env.tools)
            return CallResult(False, error=f"unknown tool {tool!r}; the tools are: {known}", error_type="UnknownTool")
        try:
            valid = validator.validate(arguments)
        except ArgumentError as error:
            return CallResult(False, error=str(error), error_type="InvalidArguments")
        with self._lock:
            self.made.append((tool, valid))
        try:
            result, error, tool_seconds = self.env.pool.call(self.id, tool, valid, self.env.call_timeout)
        except PoolError as failure:
            raise EpisodeError(f"episode {self.id!r}: {failure}") from None
        seconds = time.perf_counter() - started
        if error is not None:
            return CallResult(False, error=error["message"] or error["type"], error_type=error["type"], seconds=seconds)
        return CallResult(True, result=result, seconds=seconds, tool_seconds=tool_seconds)

    async def acall(self, tool: str, arguments: dict | None = None) -> CallResult:
        """call() for asyncio code, on a thread that waits for the episode's process."""
        return await asyncio.get_running_loop().run_in_executor(self.env._async, self.call, tool, arguments)

    async def areset(self) -> None:
        """reset() for asyncio code."""
        await asyncio.get_running_loop().run_in_executor(self.env._async, self.reset)

    def state(self) -> State:
        with self._lock:
            self._check_open()
            self.last_used = time.monotonic()
        try:
            return self.env.pool.dump(self.id)
        except PoolError as failure:
            raise EpisodeError(str(failure)) from None

    def reset(self) -> None:
        """Back to the initial state with a fresh call budget."""
        with self._lock:
            self._check_open()
            self.last_used = time.monotonic()
            try:
                self.env.pool.reset(self.id)
            except PoolError as failure:
                raise EpisodeError(str(failure)) from None
            self.calls = 0
            self.made = []

    def reward(self, final_message: str | None = None) -> dict:
        """The reward of the current state (verification.reward's RewardResult as a dict): the state
        diff, and by the task's kind the facts `final_message` (the agent's last message to the user)
        states or the forbidden call this episode made."""
        if self.task is None:
            raise RewardUnavailable("this episode was not started from a task (it runs on the sample state or a "
                                    "given state): there is nothing to reward")
        task_reward = _reward_function()
        expected = self.env.expected_state(self.task.id)
        with self._lock:
            made = list(self.made)
        try:
            result = task_reward(self.env.spec.db, self.task, self.template.initial, self.state(), expected,
                                 final_message=final_message, calls=made)
        except ValueError as error:  # a reward spec or state the schema does not have
            raise RewardUnavailable(f"task {self.task.id}'s reward cannot be computed: {error}") from None
        return result.model_dump(mode="json")

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        try:
            self.env.pool.close_episode(self.id)
        finally:
            self.env._forget(self.id)

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
