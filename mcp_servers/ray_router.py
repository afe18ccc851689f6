"""The router of mcp_servers.ray_service: EpisodeActors placed on the cluster's live nodes, each
episode kept on the actor that holds it, a dead actor's episodes restored on a live one.

See mcp_servers.ray_service for the service it backs and what its faults assume."""

from __future__ import annotations

import os
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
    EpisodeError,
    RewardUnavailable,
    UnknownTask,
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
