"""Episodes on Ray: actors, each owning a confined episode pool on its node, behind one router.

    from mcp_servers.ray_service import RayEnvironment

    with RayEnvironment("job_seeking", actors=2) as env:     # ray.init(): local, or $RAY_ADDRESS
        episode = env.create_episode(env.task_ids()[0])       # placed on the least loaded live actor
        out = episode.call("search_job_postings", {"keyword": "engineer"})
        print(out.ok, episode.reward()["reward"])
        actor = env.handle(episode.id)                        # a trainer already on Ray: no router hop
        ray.get(actor.call.remote(episode.id, "search_job_postings", {"keyword": "engineer"}))

`RayEnvironment` is the in-process API (mcp_servers.runtime.Environment) with its episodes served
by `EpisodeActor`s, so the HTTP control API, the MCP URLs and the trainers' adapters front it
unchanged (`python -m mcp_servers NAME --transport http --ray`). Each actor (mcp_servers.ray_actor) holds one
`Environment`: its template process and one confined process per episode on that actor's node,
the sandbox unchanged. The actors go to the cluster's live nodes in turn; the router
keeps each episode on the actor that holds it. `ray.init()` starts an embedded local Ray when
RAY_ADDRESS names no cluster; nothing else in the project imports Ray.

Faults. When an actor dies (its process or its node killed), the router restores each of its
episodes on a live actor from the episode's files: the database and its WAL, where every call's
commit was appended before the call returned (a half-written frame fails its checksum and is
ignored). That needs the files readable from the surviving actor's node: on one machine they are
(the episodes' folders live in /dev/shm and outlive the processes); across machines it assumes the
pools' data folders are on shared or replicated storage. Where the files cannot be read, every
later request to such an episode answers one EpisodeError naming it. A tool call that was in
flight when its actor died answers an error saying so: whether its write was committed shows in
the restored state (it is never repeated, so it never applies twice). Every request has a
deadline: a hung actor costs an error, never a hung call.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, GetTimeoutError, RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from domains.spec import State
from mcp_servers.ray_actor import EpisodeActor
from mcp_servers.runtime import (
    SAFE_ID,
    CallResult,
    Environment,
    EpisodeError,
    RewardUnavailable,
    UnknownTask,
    resolve_domain,
)

ROOT = Path(__file__).resolve().parent.parent  # what the actors import the project from
_ERRORS = {cls.__name__: cls for cls in (EpisodeError, RewardUnavailable, UnknownTask)}
UNAVAILABLE_WAIT_S = 30.0  # how long an actor Ray calls unavailable (not dead) is waited for


class OutcomeUnknown(EpisodeError):
    """The actor died during a request that is not repeated (a write); the episode was restored."""


@dataclass
class _Actor:
    handle: object
    node: str
    root: str  # its pool's data folder
    alive: bool = True
    episodes: int = 0
    cleared: bool = False  # dead, its episodes moved or given up, its folder removed
    moving: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Placement:
    """Where an episode lives; `lost` is the error every request answers once it cannot be restored."""

    actor: int
    task_id: str | None
    folder: str
    calls: int = 0
    lost: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def init_ray(address: str | None = None) -> None:
    """Connect to Ray: `address`, else $RAY_ADDRESS, else an embedded local instance started now."""
    if ray.is_initialized():
        return
    runtime_env = {"env_vars": {"PYTHONPATH": str(ROOT)}}
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, runtime_env=runtime_env, logging_level="WARNING", log_to_driver=False)
    else:
        ray.init(runtime_env=runtime_env, include_dashboard=False, logging_level="WARNING", log_to_driver=False)


class Router:
    """Episode id -> the actor holding it; restores an episode on a live actor when its actor dies."""

    def __init__(self, domain: str, actors: int | None, options: dict, timeout: float) -> None:
        nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
        count = actors or max(1, len(nodes))
        remote = ray.remote(EpisodeActor)
        # the live nodes in turn (SPREAD, and soft node affinity, left both actors on one node of two
        # now and then); a node that dies meanwhile fails the start below with Ray's error
        handles = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(nodes[n % len(nodes)], soft=False),
                                  num_cpus=0, max_concurrency=256, max_restarts=0).remote(domain, options)
                   for n in range(count)]
        places = ray.get([h.where.remote() for h in handles], timeout=600)
        self.actors = [_Actor(h, p["node"], p["root"]) for h, p in zip(handles, places)]
        self.timeout = timeout
        self.placements: dict[str, _Placement] = {}
        self._lock = threading.Lock()

    # -- placement -------------------------------------------------------------------------
    def _pick(self, exclude: frozenset[int] = frozenset()) -> int | None:
        with self._lock:
            live = [i for i, a in enumerate(self.actors) if a.alive and i not in exclude]
            if not live:
                return None
            best = min(live, key=lambda i: self.actors[i].episodes)
            self.actors[best].episodes += 1
            return best

    def _release(self, index: int) -> None:
        with self._lock:
            self.actors[index].episodes -= 1

    def placement(self, episode_id: str) -> _Placement:
        with self._lock:
            place = self.placements.get(episode_id)
        if place is None:
            raise EpisodeError(f"episode {episode_id!r} does not exist or was closed")
        return place

    def handle(self, episode_id: str):
        """The Ray actor handle holding the episode (its methods take the episode id first)."""
        place = self.placement(episode_id)
        if place.lost:
            raise EpisodeError(place.lost)
        return self.actors[place.actor].handle

    # -- requests --------------------------------------------------------------------------
    def _get(self, ref, what: str, episode_id: str):
        try:
            answer = ray.get(ref, timeout=self.timeout)
        except GetTimeoutError:
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 (an actor task Ray cannot cancel: its answer is dropped)
                pass
            about = f"episode {episode_id!r}: " if episode_id else ""
            raise EpisodeError(f"{about}{what} got no answer from its actor within {self.timeout:g} s") from None
        if "error" in answer:
            kind, message = answer["error"]
            raise _ERRORS.get(kind, EpisodeError)(message)
        return answer["ok"]

    def create(self, task_id: str | None, episode_id: str, state: State | None) -> dict:
        with self._lock:
            if episode_id in self.placements:
                raise EpisodeError(f"episode {episode_id!r} already exists")
        while True:
            index = self._pick()
            if index is None:
                raise EpisodeError("no live actor can hold an episode: every one of them died")
            try:
                made = self._get(self.actors[index].handle.create.remote(task_id, episode_id, state), "create",
                                 episode_id)
                break
            except ActorUnavailableError:  # maybe alive, maybe holding it: not a reason to call it dead
                self._release(index)
                raise EpisodeError(f"episode {episode_id!r} was not created: its actor is unavailable for the "
                                   "moment; try again") from None
            except RayActorError:
                self._release(index)
                self._mark_dead(index)
            except BaseException:
                self._release(index)
                raise
        with self._lock:
            self.placements[episode_id] = _Placement(index, task_id, made["folder"])
        return made["info"]

    def request(self, episode_id: str, method: str, *args, repeatable: bool = True):
        """The actor's answer to `method`; after its actor died, the episode is restored and the request
        repeated when `repeatable`, else an EpisodeError says the request's outcome is in the state."""
        place = self.placement(episode_id)
        deadline = time.monotonic() + UNAVAILABLE_WAIT_S
        while True:
            if place.lost:
                raise EpisodeError(place.lost)
            index = place.actor
            try:
                return self._get(getattr(self.actors[index].handle, method).remote(episode_id, *args), method,
                                 episode_id)
            except ActorUnavailableError:  # not known dead: waiting is safe, moving the episode is not
                if time.monotonic() > deadline:
                    raise EpisodeError(f"episode {episode_id!r}: its actor has been unavailable for "
                                       f"{UNAVAILABLE_WAIT_S:g} s") from None
                time.sleep(0.5)
            except (ActorDiedError, RayActorError):
                self.restore_all(index)
                if place.lost:
                    raise EpisodeError(place.lost) from None
                if not repeatable:
                    raise OutcomeUnknown(f"episode {episode_id!r}: the actor serving it died during this {method}; "
                                       f"the episode was restored from its last committed state on another "
                                       f"actor: whether this {method} was committed shows in its state (it was "
                                       f"not repeated)") from None

    def _mark_dead(self, index: int) -> None:
        with self._lock:
            self.actors[index].alive = False

    def restore(self, episode_id: str, dead: int) -> None:
        """Move the episode off actor `dead` onto a live one, from its files; else mark it lost."""
        place = self.placement(episode_id)
        with place.lock:
            if place.actor != dead or place.lost:
                return  # moved (or given up) by another request meanwhile
            why, tried = "no live actor is left", {dead}
            while True:
                index = self._pick(exclude=frozenset(tried))
                if index is None:
                    break
                tried.add(index)
                ref = self.actors[index].handle.create.remote(place.task_id, episode_id, None, place.folder,
                                                              place.calls)
                try:
                    made = self._get(ref, "restore", episode_id)
                except RayActorError as error:
                    self._release(index)
                    if not isinstance(error, ActorUnavailableError):
                        self._mark_dead(index)
                    continue
                except EpisodeError as error:
                    self._release(index)
                    why = str(error)
                    break
                self._release(dead)
                place.actor, place.folder = index, made["folder"]
                return
            self._release(dead)
            place.lost = (f"episode {episode_id!r} was lost with its actor (node {self.actors[dead].node[:12]}): "
                          f"it cannot be restored ({why}); close it and start another")

    def restore_all(self, dead: int) -> None:
        """Move every episode of a dead actor now (not at each one's next request), then remove its
        folder; a second caller waits for the first and finds them moved."""
        self._mark_dead(dead)
        actor = self.actors[dead]
        with actor.moving:
            if actor.cleared:
                return
            with self._lock:
                held = [e for e, p in self.placements.items() if p.actor == dead and not p.lost]
            for episode_id in held:
                self.restore(episode_id, dead)
            actor.cleared = True
            live = [a.handle for a in self.actors if a.alive]
            if live:
                try:
                    ray.get(live[0].discard.remote(actor.root), timeout=self.timeout)
                except Exception:  # noqa: BLE001 (a folder left behind costs disk, never a wrong state)
                    pass

    def any_actor(self, method: str, *args):
        """`method` answered by the first live actor (the next one when it dies meanwhile)."""
        for index, actor in enumerate(self.actors):
            if not actor.alive:
                continue
            try:
                return self._get(getattr(actor.handle, method).remote(*args), method, "")
            except RayActorError as error:
                if not isinstance(error, ActorUnavailableError):
                    self._mark_dead(index)
        raise EpisodeError(f"no live actor can answer {method}: every one of them died")

    def forget(self, episode_id: str) -> None:
        with self._lock:
            place = self.placements.pop(episode_id, None)
            if place is not None:
                self.actors[place.actor].episodes -= 1

    def call(self, episode_id: str, tool: str, arguments: dict | None, mutates: bool) -> dict:
        place = self.placement(episode_id)
        out = self.request(episode_id, "call", tool, arguments, repeatable=not mutates)
        place.calls = out["calls"]
        return out

    def close(self) -> None:
        live = [a.handle for a in self.actors if a.alive]
        try:
            ray.get([h.shutdown.remote() for h in live], timeout=60)
        except Exception:  # noqa: BLE001 (an actor that died meanwhile has nothing left to close)
            pass
        for actor in self.actors:
            try:
                ray.kill(actor.handle)
            except Exception:  # noqa: BLE001 (gone already)
                pass


class RayEnvironment(Environment):
    """Environment whose episodes live in EpisodeActors: the same methods, one service for a trainer.

    `actors`: how many (default: one per live node). `address`: a Ray cluster (default $RAY_ADDRESS,
    else an embedded local one). `request_timeout`: the most any request to an actor may take.
    Other keywords (memory_mb, disk_mb, max_result_bytes, ...) go to each actor's Environment.
    """

    def __init__(self, domain: str | Path, *, actors: int | None = None, address: str | None = None,
                 call_timeout: float = 5.0, max_calls: int | None = 200, max_episodes: int = 4096,
                 idle_timeout: float | None = None, request_timeout: float = 120.0, **options):
        super().__init__(domain, call_timeout=call_timeout, max_calls=max_calls, max_episodes=max_episodes,
                         idle_timeout=idle_timeout, serve=False)
        init_ray(address)
        options = {**options, "call_timeout": call_timeout, "max_calls": max_calls, "max_episodes": max_episodes}
        self.router = Router(str(resolve_domain(domain)), actors, options, max(request_timeout, call_timeout + 30))

    def close(self) -> None:
        super().close()  # closes every episode through the router
        self.router.close()

    def health(self) -> dict:
        down = sum(1 for a in self.router.actors if not a.alive)
        lost = sum(1 for p in list(self.router.placements.values()) if p.lost)
        return {"ok": down == 0 and lost == 0, "restoring": 0, "restarts": 0, "actors": len(self.router.actors),
                "actors_down": down, "episodes_lost": lost}

    def handle(self, episode_id: str):
        """The actor holding the episode, for trainers on Ray: handle.call.remote(episode_id, tool, args)."""
        return self.router.handle(episode_id)

    def initial_state(self, task_id: str | None = None) -> State:
        return self.router.any_actor("initial_state", task_id)

    def expected_state(self, task_id: str) -> State:
        return self.router.any_actor("expected_state", task_id)

    def create_episode(self, task_id: str | None = None, episode_id: str | None = None, *,
                       state: State | None = None, restore_from: str | None = None) -> RayEpisode:
        if task_id is not None and state is not None:
            raise EpisodeError("give a task or a state, not both")
        if restore_from is not None:
            raise EpisodeError("restoring from files is the router's own job on a Ray service")
        task = self.task(task_id) if task_id is not None else None  # UnknownTask before any actor is asked
        self.close_idle()
        episode_id = episode_id or secrets.token_hex(8)
        if not SAFE_ID.match(episode_id):
            raise EpisodeError(f"{episode_id!r} is not a valid episode id (letters, digits, _ . -)")
        with self._lock:
            if len(self._episodes) >= self.max_episodes:
                raise EpisodeError(f"{self.max_episodes} episodes are open; close some first")
        info = self.router.create(task_id, episode_id, state)
        episode = RayEpisode(self, episode_id, task, info)
        with self._lock:
            self._episodes[episode_id] = episode
        return episode


class RayEpisode:
    """An episode held by an actor, with mcp_servers.runtime.Episode's methods; thread-safe."""

    def __init__(self, env: RayEnvironment, episode_id: str, task, info: dict) -> None:
        self.env, self.id, self.task, self._info = env, episode_id, task, info
        self.max_calls = info.get("max_calls")
        self.closed = False
        self.last_used = time.monotonic()

    @property
    def task_id(self) -> str | None:
        return self.task.id if self.task else None

    @property
    def calls(self) -> int:
        try:
            return self.env.router.placement(self.id).calls
        except EpisodeError:  # closed
            return self._info.get("calls", 0)

    @property
    def now(self) -> str:
        return self._info["now"]

    def _request(self, method: str, *args, repeatable: bool = True):
        if self.closed:
            raise EpisodeError(f"episode {self.id!r} is closed")
        self.last_used = time.monotonic()
        return self.env.router.request(self.id, method, *args, repeatable=repeatable)

    def info(self) -> dict:
        if self.closed:
            return {**self._info, "closed": True}
        self._info = self._request("info")
        return self._info

    def call(self, tool: str, arguments: dict | None = None) -> CallResult:
        if self.closed:
            raise EpisodeError(f"episode {self.id!r} is closed")
        self.last_used = time.monotonic()
        schema = self.env.tools.get(tool)
        try:
            out = self.env.router.call(self.id, tool, arguments, mutates=schema is None or schema.mutates)
        except OutcomeUnknown as error:  # what the in-process runtime answers when a tool's process dies
            return CallResult(False, error=str(error), error_type="WorkerCrashed")
        return CallResult(out["ok"], out["result"], out["error"], out["error_type"], out["seconds"],
                          out["tool_seconds"])

    async def acall(self, tool: str, arguments: dict | None = None) -> CallResult:
        return await asyncio.get_running_loop().run_in_executor(self.env._async, self.call, tool, arguments)

    async def areset(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self.env._async, self.reset)

    def state(self) -> State:
        return self._request("state")

    def reset(self) -> None:
        self._info = self._request("reset")  # repeatable: the initial state whatever happened before

    def reward(self) -> dict:
        if self.task is None:
            raise RewardUnavailable("this episode was not started from a task (it runs on the sample state or a "
                                    "given state): there is nothing to reward")
        return self._request("reward")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            place = self.env.router.placement(self.id)
            if not place.lost:
                self.env.router.request(self.id, "close")
        except EpisodeError:
            pass  # its actor is gone and so is the episode
        finally:
            self.env.router.forget(self.id)
            self.env._forget(self.id)

    def __enter__(self) -> RayEpisode:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
