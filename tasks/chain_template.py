"""The parent's handle on the chain programs' template process (tasks/chain_runner.py).

Starting a confined interpreter per program cost most of run_chain's time, so one template is
started through verification.confine (namespaces, cgroup, rlimits) and forks a fresh process
per program; each fork applies the inner layers (identity, limits, Landlock, seccomp) before it
reads its program, and is killed and reaped when the program ends, so a program sees nothing of
another's. The parent talks to a fork over two pipes of its own, one JSON line each way, as it
did to a whole process. A template that dies or stops answering is replaced.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import verification
from verification.confine import Confinement

RUNNER = Path(__file__).with_name("chain_runner.py")
GUARD_DIR = str(Path(verification.__file__).resolve().parent)
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
CONTROL_TIMEOUT_S = 10.0
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

    def __init__(self, memory_mb: int = 512, processes: int = 4):
        self.memory_mb, self.processes = memory_mb, processes
        # the tree's cgroup also holds the template: one task more than a program's own limit
        self.confinement = Confinement(memory_mb=memory_mb, processes=processes + 1, scratch_mb=8, file_mb=1,
                                       readable=(str(RUNNER.parent),))
        self.starts = 0
        self._proc: subprocess.Popen | None = None
        self._control: socket.socket | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = self.confinement.popen(
                [sys.executable, "-I", str(RUNNER), GUARD_DIR, str(theirs.fileno())], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, pass_fds=[theirs.fileno()])
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._control = ours
        self.starts += 1

    def _stop(self) -> None:
        if self._control is not None:
            self._control.close()
        if self._proc is not None:
            Confinement.kill(self._proc)  # the whole tree and its cgroup
        self._proc = self._control = None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _ask(self, message: dict, fds: list[int] = (), timeout: float = CONTROL_TIMEOUT_S) -> dict:
        try:
            socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))
            self._control.settimeout(timeout)
            data = self._control.recv(1 << 16)
            reply = json.loads(data) if data else {"error": "it closed its socket"}
        except (OSError, ValueError) as error:
            raise TemplateError(f"the chain template is not answering: {error}") from None
        if not isinstance(reply, dict) or reply.get("ok") is not True:
            why = reply.get("error") if isinstance(reply, dict) else reply
            raise TemplateError(f"the chain template refused: {why}")
        return reply

    def fork(self) -> Fork:
        """A fresh confined process, waiting for its program; a dead or failing template is replaced."""
        try:
            return self._fork()
        except TemplateError:
            self._stop()
            try:
                return self._fork()
            except TemplateError:
                self._stop()
                raise

    def _fork(self) -> Fork:
        if not self.alive():
            self._stop()
            self._start()
        replies_in, replies_out = os.pipe()
        calls_in, calls_out = os.pipe()
        try:
            reply = self._ask({"op": "run", "memory_mb": self.memory_mb, "processes": self.processes},
                              [replies_in, calls_out])
            pid = int(reply.get("pid"))
        except (TemplateError, TypeError, ValueError) as error:
            os.close(replies_out)
            os.close(calls_in)
            raise TemplateError(str(error)) from None
        finally:
            os.close(replies_in)  # the fork holds its ends: EOF reaches us when it dies
            os.close(calls_out)
        return Fork(pid, replies_out, calls_in)

    def finish(self, fork: Fork, grace: float = 0.0) -> int | None:
        """Kill and reap the fork, after `grace` s to exit by itself; its exit code, None when it
        had to be killed here."""
        if fork.reaped:
            return fork.exit
        fork.reaped = True
        fork.close()
        try:
            reply = self._ask({"op": "reap", "pid": fork.pid, "grace": grace}, timeout=grace + CONTROL_TIMEOUT_S)
            status = int(reply["status"])
            if not reply.get("killed"):  # a signal as 128 + its number, as bubblewrap reported it
                fork.exit = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        except (TemplateError, KeyError, TypeError, ValueError):
            self._stop()  # a template that cannot reap is not trusted with the next program
        return fork.exit

    def close(self) -> None:
        self._stop()
