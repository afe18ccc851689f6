"""Run generated code outside the orchestrator: one limited worker process per sandbox.

The worker (verification/worker.py) gets a wall-clock timeout per request, address-space,
file-size and open-file limits, no network (its own network namespace where the kernel
allows it, and a refused socket layer always), a scrubbed environment and a temporary
working directory. A hung or crashed worker is killed and replaced; the tools defined so far
are defined again in the new one, so one bad tool does not cost the others.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import resource
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from verification.guard import UnsafeCode, check_source

WORKER = Path(__file__).with_name("worker.py")
CLONE_NEWNET = 0x40000000


class SandboxError(RuntimeError):
    """The worker died or did not answer in time."""


class SandboxTimeout(SandboxError):
    pass


def _limits(memory_mb: int, file_mb: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        os.setsid()
        try:  # a private network namespace has no interfaces at all; needs privilege
            ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET)
        except Exception:
            pass

    return apply


class Sandbox:
    """A worker process holding one domain's DB layer and the tools defined into it."""

    def __init__(self, db_source: str, timeout: float = 2.0, memory_mb: int = 1536, file_mb: int = 8,
                 extension: str | None = None):
        self.db_source, self.timeout = db_source, timeout
        self.memory_mb, self.file_mb, self.extension = memory_mb, file_mb, extension
        self.sources: dict[str, str] = {}
        self.restarts = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._dir: str | None = None
        self._start()

    # -- process -------------------------------------------------------------------------
    def _start(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="worldsmith-sandbox-")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        if self.extension:
            env["WORLDSMITH_WORKER_EXTENSION"] = self.extension
        self._log = open(os.path.join(self._dir, "worker.log"), "wb")
        self._proc = subprocess.Popen(
            [sys.executable, "-I", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, cwd=self._dir, env=env, preexec_fn=_limits(self.memory_mb, self.file_mb),
        )
        self._send({"op": "init", "db_source": self.db_source}, timeout=60)
        for name, source in self.sources.items():
            self._send({"op": "define", "tool": name, "source": source}, timeout=10)

    def _kill(self) -> None:
        if self._proc and self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, 9)
            except ProcessLookupError:
                pass
            self._proc.wait()
        if self._proc:
            for stream in (self._proc.stdin, self._proc.stdout):
                stream.close()
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self._kill()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def _log_tail(self) -> str:
        try:
            return Path(self._dir, "worker.log").read_bytes()[-1500:].decode(errors="replace")
        except OSError:
            return ""

    def _send(self, message: dict, timeout: float) -> dict:
        data = json.dumps(message).encode()
        proc = self._proc
        try:
            proc.stdin.write(struct.pack(">I", len(data)) + data)
            proc.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            raise SandboxError(f"the sandbox worker is gone: {error}\n{self._log_tail()}") from None
        deadline = time.monotonic() + timeout
        reply = _read(proc.stdout.fileno(), deadline)
        if reply is not _LATE and reply is not None and isinstance(reply.get("attachment"), int):
            blob = _read_exactly(proc.stdout.fileno(), reply["attachment"], deadline)
            reply = blob if blob is _LATE or blob is None else {**reply, "attachment": blob}
        if reply is _LATE:
            raise SandboxTimeout(f"no answer within {timeout:g} s")
        if reply is None:
            raise SandboxError(f"the sandbox worker died (exit {proc.poll()})\n{self._log_tail()}")
        return reply

    def request(self, message: dict, timeout: float) -> dict:
        """Send one request; a worker that hangs or dies is replaced and the error raised."""
        with self._lock:
            try:
                return self._send(message, timeout)
            except SandboxError:
                self._kill()
                self.restarts += 1
                self._start()
                raise

    # -- operations ----------------------------------------------------------------------
    def define(self, tool: str, source: str) -> str | None:
        """Load a tool's code; returns the reason it was refused, or None."""
        try:
            check_source(source)  # refuse before anything runs, even in the worker
        except UnsafeCode as error:
            return f"refused by the sandbox: {error}"
        reply = self.request({"op": "define", "tool": tool, "source": source}, timeout=10)
        if not reply["ok"]:
            return reply["error"]
        self.sources[tool] = source
        return None

    def run_tests(self, tool: str, tests: list[dict]) -> list[dict]:
        """Run procedural tests of one tool; a hang or crash fails them all with the reason."""
        budget = self.timeout * len(tests) + 5
        try:
            reply = self.request({"op": "test", "tool": tool, "tests": tests, "timeout": self.timeout}, budget)
        except SandboxError as error:
            reason = f"the sandbox worker was killed: {error}".strip()
            return [{"name": t["name"], "kind": t["kind"], "passed": False, "problems": [reason]} for t in tests]
        if not reply["ok"]:
            return [{"name": t["name"], "kind": t["kind"], "passed": False, "problems": [reply["error"]]} for t in tests]
        return reply["results"]


_LATE = object()


def _read(fd: int, deadline: float) -> dict | None | object:
    """One reply frame, None when the worker closed its end, _LATE past the deadline.

    Polls the pipe instead of parking a reader thread per request: a request costs no thread
    start, and a worker that never answers leaves nothing behind once it is killed.
    """
    header = _read_exactly(fd, 4, deadline)
    if header is None or header is _LATE:
        return header
    (size,) = struct.unpack(">I", header)
    body = _read_exactly(fd, size, deadline)
    if body is None or body is _LATE:
        return body
    return json.loads(body)


def _read_exactly(fd: int, size: int, deadline: float) -> bytes | None | object:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    chunks: list[bytes] = []
    while size:
        wait_ms = math.ceil((deadline - time.monotonic()) * 1000)
        if wait_ms <= 0 or not poller.poll(wait_ms):
            return _LATE
        chunk = os.read(fd, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
