"""Sandbox workers that hold episode databases, and the parent's copy of every committed state.

Episodes are spread over a few sandbox workers (verification/episodes_worker.py); each worker
serves one request at a time, so more workers mean more calls in parallel. The parent keeps,
per episode, the snapshot of its last committed state (None while it equals its template). A
worker that must be killed (a hung tool) is replaced by the sandbox; its templates and every
episode it held are then restored into the new worker exactly as they were committed.
"""

from __future__ import annotations

import base64
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from verification.sandbox import Sandbox, SandboxError, SandboxTimeout

# How long past its own timeout a call may take before the parent kills the worker. The
# worker's own alarm normally answers first; this catches tools that swallow the alarm.
KILL_GRACE_S = 1.0


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class PoolError(RuntimeError):
    """A worker refused an operation (not a tool error: those come back as results)."""


@dataclass
class _Slot:
    worker: int
    key: str
    now: str | None
    snapshot: bytes | None = None  # the last committed database; None: the template's


class WorkerPool:
    def __init__(self, db_source: str, tool_sources: dict[str, str], size: int | None = None,
                 memory_mb: int = 1536):
        size = max(1, size or os.cpu_count() or 1)
        with ThreadPoolExecutor(size) as starter:  # each worker imports SQLModel: start them together
            self.workers = list(starter.map(
                lambda _: Sandbox(db_source, memory_mb=memory_mb, extension="episodes_worker"), range(size)))
        for box in self.workers:
            for name, source in sorted(tool_sources.items()):
                refused = box.define(name, source)
                if refused:
                    self.close()
                    raise PoolError(f"tool {name} does not load in the sandbox: {refused}")
        self._locks = [threading.Lock() for _ in self.workers]
        self._book = threading.Lock()
        self._templates: dict[str, bytes] = {}
        self._installed: list[set[str]] = [set() for _ in self.workers]
        self._slots: dict[str, _Slot] = {}
        self._load = [0] * len(self.workers)
        self.kills = 0

    # -- requests ------------------------------------------------------------------------
    def _request(self, index: int, message: dict, timeout: float = 30.0) -> dict:
        """One request to a worker whose lock the caller holds; a killed worker is restored."""
        try:
            reply = self.workers[index].request(message, timeout)
        except SandboxError:
            self.kills += 1
            self._restore(index)
            raise
        if not reply.get("ok"):
            raise PoolError(reply.get("error", "the worker refused the request"))
        return reply

    def _restore(self, index: int) -> None:
        """Put the templates and committed episodes back into a freshly started worker."""
        box = self.workers[index]
        installed = set()
        for key in sorted(self._installed[index]):
            box.request({"op": "ep_put_template", "key": key, "snapshot": _b64(self._templates[key])}, 30)
            installed.add(key)
        self._installed[index] = installed
        with self._book:
            slots = [(eid, slot) for eid, slot in self._slots.items() if slot.worker == index]
        for eid, slot in slots:
            box.request({"op": "ep_create", "episode_id": eid, "key": slot.key, "now": slot.now,
                         "snapshot": _b64(slot.snapshot) if slot.snapshot is not None else None}, 30)

    def _ensure_template(self, index: int, key: str) -> None:
        if key not in self._installed[index]:
            self._request(index, {"op": "ep_put_template", "key": key, "snapshot": _b64(self._templates[key])})
            self._installed[index].add(key)

    # -- templates -----------------------------------------------------------------------
    def add_template(self, key: str, state: dict) -> dict:
        """Build a template from rows; returns the state as the database holds it."""
        with self._locks[0]:
            reply = self._request(0, {"op": "ep_template", "key": key, "state": state})
            self._templates[key] = reply["attachment"]
            self._installed[0].add(key)
        return reply["state"]

    def has_template(self, key: str) -> bool:
        return key in self._templates

    # -- episodes ------------------------------------------------------------------------
    def create(self, episode_id: str, key: str, now: str | None = None) -> None:
        with self._book:
            if episode_id in self._slots:
                raise PoolError(f"episode {episode_id!r} already exists")
            index = min(range(len(self.workers)), key=lambda i: (self._load[i], i))
            self._load[index] += 1
            self._slots[episode_id] = _Slot(index, key, now)
        try:
            with self._locks[index]:
                self._ensure_template(index, key)
                self._request(index, {"op": "ep_create", "episode_id": episode_id, "key": key, "now": now})
        except BaseException:
            self._forget(episode_id)
            raise

    def call(self, episode_id: str, tool: str, arguments: dict, timeout: float) -> tuple[object, dict | None]:
        """Run one tool call as one transaction: (result, None) or (None, {type, message})."""
        slot = self._slot(episode_id)
        message = {"op": "ep_call", "episode_id": episode_id, "tool": tool, "arguments": arguments,
                   "timeout": timeout}
        with self._locks[slot.worker]:
            try:
                reply = self._request(slot.worker, message, timeout + KILL_GRACE_S)
            except SandboxTimeout:
                return None, {"type": "Timeout", "message": f"the tool did not finish within {timeout:g} s and "
                                                            f"was stopped; the episode's state is unchanged"}
            except SandboxError as error:
                first = (str(error).splitlines() or [""])[0]
                return None, {"type": "WorkerCrashed", "message": f"the tool crashed its sandbox worker ({first}); "
                                                                  f"the episode's state is unchanged"}
            if "attachment" in reply:
                slot.snapshot = reply["attachment"]
        return reply["result"], reply["error"]

    def reset(self, episode_id: str) -> None:
        slot = self._slot(episode_id)
        with self._locks[slot.worker]:
            self._request(slot.worker, {"op": "ep_reset", "episode_id": episode_id})
            slot.snapshot = None

    def dump(self, episode_id: str) -> dict:
        slot = self._slot(episode_id)
        with self._locks[slot.worker]:
            return self._request(slot.worker, {"op": "ep_dump", "episode_id": episode_id})["state"]

    def close_episode(self, episode_id: str) -> None:
        with self._book:
            slot = self._slots.get(episode_id)
        if slot is None:
            return
        try:
            with self._locks[slot.worker]:
                self._request(slot.worker, {"op": "ep_close", "episode_id": episode_id})
        finally:
            self._forget(episode_id)

    def _forget(self, episode_id: str) -> None:
        with self._book:
            slot = self._slots.pop(episode_id, None)
            if slot is not None:
                self._load[slot.worker] -= 1

    def _slot(self, episode_id: str) -> _Slot:
        with self._book:
            slot = self._slots.get(episode_id)
        if slot is None:
            raise PoolError(f"episode {episode_id!r} is not open")
        return slot

    def worker_of(self, episode_id: str) -> int:
        """Which worker holds the episode: calls to one worker run one at a time."""
        return self._slot(episode_id).worker

    def close(self) -> None:
        for box in self.workers:
            box.close()
