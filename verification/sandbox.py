"""Run generated code outside the orchestrator, in confined worker processes.

Every worker (verification/worker.py) is started through verification.confine (namespaces,
unprivileged identity, Landlock, seccomp, cgroup and rlimits; see the README's Confinement
section) and spoken to through verification.protocol (request ids, size caps; anything
unexpected kills it). Each request has a wall-clock timeout.

- Procedural tests: a fresh process per tool under test, so no tool sees what another left
  behind (module globals, patched classes, builtins). One spare process is always starting
  with the DB layer loaded, so the next tool does not wait for an interpreter. The worker
  gets only the tests' inputs; verification.verdict decides pass or fail here.
- `request` (integrity checks, the episode extension): one long-lived process; a hung,
  crashed or misbehaving one is killed and replaced, its tools defined again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from verification import protocol
from verification.confine import Confinement, layers
from verification.guard import UnsafeCode, check_source
from verification.verdict import inputs, judge

WORKER = Path(__file__).with_name("worker.py")
MAX_REPLY_BYTES = 64 << 20


class SandboxError(RuntimeError):
    """The worker died, did not answer in time, or broke the protocol."""


class SandboxTimeout(SandboxError):
    pass


class _Process:
    """One confined worker process with the DB layer loading (or loaded)."""

    def __init__(self, box: Sandbox) -> None:
        self._dir = tempfile.mkdtemp(prefix="worldsmith-sandbox-")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        if box.extension:
            env["WORLDSMITH_WORKER_EXTENSION"] = box.extension
        self._log = open(os.path.join(self._dir, "worker.log"), "wb")
        self.proc = box.confinement.popen([sys.executable, "-I", str(WORKER)], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=self._log, env=env)
        self.channel = protocol.Channel(self.proc.stdin, self.proc.stdout.fileno(), MAX_REPLY_BYTES)
        self._init = self.channel.send({"op": "init", "db_source": box.db_source})
        self._ready = False
        found = layers(box.confinement.namespaces)
        self._expected = [name for name in ("identity", "landlock", "seccomp") if found[name]]

    def ready(self) -> None:
        """Wait for the DB layer; refuse a worker that did not get every layer the probe got."""
        if self._ready:
            return
        reply = self._receive(self._init, 60)
        if not reply.get("ok"):
            raise SandboxError(f"the DB layer does not load: {reply.get('error')}")
        missing = set(self._expected) - set(reply.get("layers", []))
        if missing:
            raise SandboxError(f"the worker did not get its confinement layers: {', '.join(sorted(missing))}")
        self._ready = True

    def request(self, message: dict, timeout: float) -> dict:
        self.ready()
        return self._receive(self.channel.send(message), timeout)

    def _receive(self, request_id: int, timeout: float) -> dict:
        try:
            reply, blob = self.channel.receive(request_id, timeout)
        except protocol.WorkerTimeout:
            raise SandboxTimeout(f"no answer within {timeout:g} s") from None
        except protocol.WorkerGone:
            raise SandboxError(f"the sandbox worker died (exit {self.proc.poll()})\n{self.log_tail()}") from None
        except protocol.ProtocolError as error:
            raise SandboxError(f"the sandbox worker broke the protocol: {error}") from None
        return reply if blob is None else {**reply, "attachment": blob}

    def log_tail(self) -> str:
        try:
            return Path(self._dir, "worker.log").read_bytes()[-1500:].decode(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        Confinement.kill(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:  # a pipe the dead worker left full
                pass
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)


class Sandbox:
    """Confined workers for one domain's DB layer and the tools defined into it."""

    def __init__(self, db_source: str, timeout: float = 2.0, memory_mb: int = 1536, file_mb: int = 8,
                 extension: str | None = None):
        self.db_source, self.timeout, self.extension = db_source, timeout, extension
        self.confinement = Confinement(memory_mb=memory_mb, file_mb=file_mb)
        self.sources: dict[str, str] = {}
        self.restarts = 0
        self._lock = threading.Lock()
        self._shared: _Process | None = None  # request(): integrity checks, the episode extension
        self._spare: _Process | None = None  # the next fresh process, already loading the DB layer
        self._held: tuple[str, _Process] | None = None  # the process a tool was just defined in
        if extension:
            self._start_shared()
        else:
            self._spare = _Process(self)

    # -- processes -----------------------------------------------------------------------
    def _start_shared(self) -> None:
        self._shared = _Process(self)
        try:
            self._shared.ready()
            for name, source in self.sources.items():
                self._shared.request({"op": "define", "tool": name, "source": source}, timeout=10)
        except SandboxError:
            self._shared.close()
            self._shared = None
            raise

    def _fresh(self) -> _Process:
        """A process that has run nothing but the DB layer; the next one starts meanwhile."""
        process, self._spare = self._spare or _Process(self), _Process(self)
        try:
            process.ready()
        except SandboxError:
            process.close()
            raise
        return process

    def close(self) -> None:
        with self._lock:
            for process in (self._shared, self._spare, self._held and self._held[1]):
                if process:
                    process.close()
            self._shared = self._spare = self._held = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def request(self, message: dict, timeout: float) -> dict:
        """One request to the long-lived worker; one that hangs, dies or misbehaves is replaced."""
        with self._lock:
            try:
                if self._shared is None:
                    self._start_shared()
                return self._shared.request(message, timeout)
            except SandboxError:
                if self._shared:
                    self._shared.close()
                self.restarts += 1
                self._start_shared()
                raise

    # -- tools ---------------------------------------------------------------------------
    def add(self, tool: str, source: str) -> str | None:
        """Record a tool's code, checked by the guard only; it loads when its tests run."""
        try:
            check_source(source)  # refuse before anything runs, even in the worker
        except UnsafeCode as error:
            return f"refused by the sandbox: {error}"
        self.sources[tool] = source
        return None

    def define(self, tool: str, source: str) -> str | None:
        """Load a tool's code in a fresh process; returns the reason it was refused, or None."""
        refused = self.add(tool, source)
        if refused:
            self.sources.pop(tool, None)
            return refused
        if self.extension:
            reply = self.request({"op": "define", "tool": tool, "source": source}, timeout=10)
            return None if reply["ok"] else reply["error"]
        with self._lock:
            if self._held:
                self._held[1].close()
                self._held = None
            process = self._fresh()
            error = self._define_in(process, tool, source)
            if error:
                process.close()
                self.sources.pop(tool, None)
                return error
            self._held = (tool, process)
        return None

    @staticmethod
    def _define_in(process: _Process, tool: str, source: str) -> str | None:
        try:
            reply = process.request({"op": "define", "tool": tool, "source": source}, timeout=10)
        except SandboxError as error:
            return f"the sandbox worker was killed: {error}".strip()
        return None if reply.get("ok") else str(reply.get("error"))

    def run_tests(self, tool: str, tests: list[dict]) -> list[dict]:
        """Run procedural tests of one tool in its own process; verdicts are decided here."""
        def fail_all(reason: str) -> list[dict]:
            return [{"name": t["name"], "kind": t["kind"], "passed": False, "problems": [reason]} for t in tests]

        if tool not in self.sources:
            return fail_all(f"tool {tool!r} is not defined")
        with self._lock:
            if self._held and self._held[0] == tool:
                process, self._held = self._held[1], None
            else:
                process = self._fresh()
                error = self._define_in(process, tool, self.sources[tool])
                if error:
                    process.close()
                    return fail_all(error)
        budget = self.timeout * len(tests) + 5
        try:
            reply = process.request({"op": "test", "tool": tool, "tests": [inputs(t) for t in tests],
                                     "timeout": self.timeout}, budget)
        except SandboxError as error:
            return fail_all(f"the sandbox worker was killed: {error}".strip())
        finally:
            process.close()
        if not reply.get("ok"):
            return fail_all(str(reply.get("error")))
        outcomes = reply.get("outcomes")
        if not isinstance(outcomes, list) or len(outcomes) != len(tests):
            return fail_all("the sandbox worker sent a malformed reply")
        return [judge(test, outcome) for test, outcome in zip(tests, outcomes)]
