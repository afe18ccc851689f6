"""The Ray actor that holds one node's episodes: an Environment (mcp_servers.runtime) with its
template and confined episode processes, the sandbox unchanged. mcp_servers.ray_service places
these actors and routes each episode's requests to the one holding it.

Every method answers {"ok": value} or {"error": [kind, message]} (kind: EpisodeError,
RewardUnavailable or UnknownTask), so a refusal never reads as the actor's death: Ray's own
errors mean that.
"""

from __future__ import annotations

import os
import shutil

import ray

from domains.spec import State
from mcp_servers.pool import PoolError
from mcp_servers.runtime import Environment, EpisodeError, RewardUnavailable, UnknownTask
from sandbox import mounts


class EpisodeActor:
    """One node's episodes; `create` with `restore_from` adopts a dead actor's episode from its files."""

    def __init__(self, domain: str, options: dict) -> None:
        self.env = Environment(domain, **options)
        self.node_id = ray.get_runtime_context().get_node_id()

    def _answer(self, work) -> dict:
        try:
            return {"ok": work()}
        except (EpisodeError, RewardUnavailable, UnknownTask) as error:
            return {"error": [type(error).__name__, str(error)]}
        except PoolError as error:
            return {"error": ["EpisodeError", str(error)]}

    def where(self) -> dict:
        return {"node": self.node_id, "root": self.env.pool.root, "pid": os.getpid()}

    def create(self, task_id: str | None, episode_id: str, state: State | None = None,
               restore_from: str | None = None, calls: int = 0) -> dict:
        def work() -> dict:
            episode = self.env.create_episode(task_id, episode_id, state=state, restore_from=restore_from)
            episode.calls = calls
            if restore_from:  # its old folder (a dead actor's) is not needed any more
                _discard(restore_from)
            return {"info": episode.info(), "folder": self.env.pool.folder(episode.id), "node": self.node_id}
        return self._answer(work)

    def call(self, episode_id: str, tool: str, arguments: dict | None = None) -> dict:
        def work() -> dict:
            episode = self.env.get_episode(episode_id)
            out = episode.call(tool, arguments)
            return {**out.as_dict(), "seconds": out.seconds, "tool_seconds": out.tool_seconds, "calls": episode.calls}
        return self._answer(work)

    def info(self, episode_id: str) -> dict:
        return self._answer(lambda: self.env.get_episode(episode_id).info())

    def state(self, episode_id: str) -> dict:
        return self._answer(lambda: self.env.get_episode(episode_id).state())

    def reward(self, episode_id: str, final_message: str | None = None) -> dict:
        return self._answer(lambda: self.env.get_episode(episode_id).reward(final_message))

    def reset(self, episode_id: str) -> dict:
        def work() -> dict:
            episode = self.env.get_episode(episode_id)
            episode.reset()
            return episode.info()
        return self._answer(work)

    def close(self, episode_id: str) -> dict:
        def work() -> None:
            try:
                self.env.get_episode(episode_id).close()
            except EpisodeError:
                pass  # closed already
        return self._answer(work)

    def health(self) -> dict:
        return {**self.env.health(), "episodes": len(self.env.episodes()), "node": self.node_id}

    def initial_state(self, task_id: str | None) -> dict:
        return self._answer(lambda: self.env.initial_state(task_id))

    def expected_state(self, task_id: str) -> dict:
        return self._answer(lambda: self.env.expected_state(task_id))

    def discard(self, folder: str) -> None:
        _discard(folder)

    def shutdown(self) -> None:
        self.env.close()


def _discard(folder: str) -> None:
    """Remove a dead pool's folder (its tmpfs mounts first); what cannot be reached is left."""
    for root, _dirs, _files in os.walk(folder, topdown=False):
        if os.path.ismount(root):
            mounts.unmount(root)
    if os.path.ismount(folder):
        mounts.unmount(folder)
    shutil.rmtree(folder, ignore_errors=True)
