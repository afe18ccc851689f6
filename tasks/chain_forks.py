"""The parent's handle on the chain programs' template process (tasks.chain_process).

Starting a confined interpreter per program cost most of run_chain's time, so one template is
started through sandbox.forkserver and forks a fresh process per program; each fork locks itself
down before it reads its program, says which layers it applied (a fork missing one this machine
gives is refused), and is killed and reaped when the program ends, so a program sees nothing of
another's. The parent talks to a fork over two pipes of its own, one JSON line each way. A
template that dies or stops answering is replaced.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import time

from sandbox.forkserver import ForkServer, ForkServerError, check_layers, expected_layers
from sandbox.launch import Confinement
from sandbox.policy import CHAIN_PROGRAMS, Policy

SERVICE = "tasks.chain_process"
READY_TIMEOUT_S = 10.0
MAX_LINE_BYTES = 16 << 20  # a call's JSON line; far above any tool's arguments


class TemplateError(RuntimeError):
    """The template died, did not answer in time, or refused a request."""


class Fork:
    """One program's process: the parent reads its calls and writes replies, one JSON line each,
    never past the program's deadline (a program that writes half a line, or reads no reply,
    cannot hold the parent)."""

    def __init__(self, pid: int, replies: int, calls: int):
        self.pid, self.replies, self.calls = pid, replies, calls
        os.set_blocking(replies, False)
        self.reaped, self.exit = False, None
        self._pending = b""

    def send(self, line: str, deadline: float) -> bool:
        """Write `line`; False when the deadline passed first. BrokenPipeError when the fork is gone."""
        data = memoryview(line.encode())
        while data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self.replies], [], left)[1]:
                return False
            try:
                data = data[os.write(self.replies, data):]
            except BlockingIOError:
                pass
        return True

    def receive(self, deadline: float) -> str | None:
        """The next line with its newline ('' at end of input, what is left there without one),
        None when the deadline passed first. ValueError for a line over MAX_LINE_BYTES."""
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.calls], [], [], left)[0]:
                return None
            chunk = os.read(self.calls, 1 << 16)
            if not chunk:
                line, self._pending = self._pending, b""
                return line.decode()
            self._pending += chunk
            if len(self._pending) > MAX_LINE_BYTES:
                raise ValueError(f"a line over {MAX_LINE_BYTES} bytes")
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode() + "\n"

    def close(self) -> None:
        for fd in (self.replies, self.calls):
            os.close(fd)


class ChainTemplate:
    """A confined template for chain programs; one program at a time (the caller serialises)."""

    def __init__(self, memory_mb: int = 512, processes: int = 4, policy: Policy = CHAIN_PROGRAMS):
        self.policy = dataclasses.replace(policy, memory_mb=memory_mb, processes=processes)
        # the tree's cgroup also holds the template: one task more than a program's own limit
        conf = Confinement(self.policy, tree_processes=processes + 1, scratch_mb=8)
        self.server = ForkServer(SERVICE, self.policy, confinement=conf)
        self._expected = expected_layers(self.policy)

    @property
    def starts(self) -> int:
        return self.server.starts

    @property
    def _proc(self):
        return self.server.proc

    def fork(self) -> Fork:
        """A fresh confined process that has said it is ready for its program; a dead or failing
        template is replaced."""
        replies_in, replies_out = os.pipe()
        calls_in, calls_out = os.pipe()
        try:
            pid, pidfd = self.server.spawn({}, [replies_in, calls_out], reap_here=True)
            os.close(pidfd)
        except ForkServerError as error:
            os.close(replies_out)
            os.close(calls_in)
            raise TemplateError(f"the chain template refused: {error}") from None
        finally:
            os.close(replies_in)  # the fork holds its ends: EOF reaches us when it dies
            os.close(calls_out)
        fork = Fork(pid, replies_out, calls_in)
        try:
            ready = json.loads(fork.receive(time.monotonic() + READY_TIMEOUT_S) or "{}")
        except ValueError:
            ready = {}
        missing = check_layers(ready.get("layers"), self._expected) if isinstance(ready, dict) else "all"
        if not isinstance(ready, dict) or ready.get("ready") is not True or missing:
            self.finish(fork)
            raise TemplateError(f"the program's process did not confine itself (missing: {missing or 'its answer'})")
        return fork

    def finish(self, fork: Fork, grace: float = 0.0) -> int | None:
        """Kill and reap the fork, after `grace` s to exit by itself; its exit code, None when it
        had to be killed here."""
        if fork.reaped:
            return fork.exit
        fork.reaped = True
        fork.close()
        try:
            status, killed = self.server.reap(fork.pid, grace, clear=True)
            if not killed:  # a signal as 128 + its number, as bubblewrap reported it
                fork.exit = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        except ForkServerError:
            self.server.stop()  # a template that cannot reap is not trusted with the next program
        return fork.exit

    def close(self) -> None:
        self.server.close()
