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
RAY_ADDRESS names no cluster; besides these modules only `python -m pipeline.universe --ray`
(pipeline/universe_ray.py) and bench/ray.py import Ray.

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
import secrets
import time
from pathlib import Path

from domains.spec import State
from mcp_servers.ray_router import ROOT, OutcomeUnknown, Router, init_ray
from mcp_servers.runtime import (
    SAFE_ID,
    CallResult,
    Environment,
    EpisodeError,
    RewardUnavailable,
    resolve_domain,
)

__all__ = ["ROOT", "RayEnvironment", "RayEpisode", "Router", "init_ray"]


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

    def reward(self, final_message: str | None = None) -> dict:
        if self.task is None:
            raise RewardUnavailable("this episode was not started from a task (it runs on the sample state or a "
                                    "given state): there is nothing to reward")
        return self._request("reward", final_message)

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
