"""Run generated code outside the orchestrator, in confined processes forked from a template.

One worker per sandbox (verification/worker.py) is started through verification.confine
(namespaces, cgroup and rlimits) and spoken to through verification.protocol (request ids,
size caps; anything unexpected kills it). It loads the DB layer once and runs no generated
code itself: every request (define a tool, run its tests, integrity checks) is handled by a
fresh process forked from it, which applies the inner layers (identity, Landlock, seccomp)
before it reads its request and exits after its reply. So no tool sees what another left
behind (module globals, patched classes, builtins, files in the scratch), and a tool under
test costs a fork rather than an interpreter start. The worker gets only the tests' inputs;
verification.verdict decides pass or fail here.
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
    """The confined template process: the DB layer loaded, one fork per request."""

    def __init__(self, box: Sandbox) -> None:
        self._dir = tempfile.mkdtemp(prefix="worldsmith-sandbox-")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        self._log = open(os.path.join(self._dir, "worker.log"), "wb")
        self.proc = box.confinement.popen([sys.executable, "-I", str(WORKER)], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=self._log, env=env)
        self.channel = protocol.Channel(self.proc.stdin, self.proc.stdout.fileno(), MAX_REPLY_BYTES)
        self._init = self.channel.send({"op": "init", "db_source": box.db_source})
        self._ready = False
        found = layers(box.confinement.namespaces)
        self._expected = {name for name in ("identity", "landlock", "seccomp") if found[name]}

    def request(self, message: dict, budget: float) -> dict:
        """One request, handled by a fresh fork; the template kills a fork past `budget`."""
        if not self._ready:
            reply = self._receive(self._init, 60)
            if not reply.get("ok"):
                raise SandboxError(f"the DB layer does not load: {reply.get('error')}")
            self._ready = True
        message = {**message, "budget": budget, "max_bytes": MAX_REPLY_BYTES - 4096}
        reply = self._receive(self.channel.send(message), budget + 10)
        missing = self._expected - set(reply.get("layers") or ()) if reply.get("ok") else set()
        if missing:
            raise SandboxError(f"the worker did not get its confinement layers: {', '.join(sorted(missing))}")
        return reply

    def _receive(self, request_id: int, timeout: float) -> dict:
        try:
            reply, _blob = self.channel.receive(request_id, timeout)
        except protocol.WorkerTimeout:
            raise SandboxTimeout(f"no answer within {timeout:g} s") from None
        except protocol.WorkerGone:
            raise SandboxError(f"the sandbox worker died (exit {self.proc.poll()})\n{self.log_tail()}") from None
        except protocol.ProtocolError as error:
            raise SandboxError(f"the sandbox worker broke the protocol: {error}") from None
        return reply

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
    """A confined template for one domain's DB layer, and the tools recorded for it."""

    def __init__(self, db_source: str, timeout: float = 2.0, memory_mb: int = 1536, file_mb: int = 8):
        self.db_source, self.timeout = db_source, timeout
        self.confinement = Confinement(memory_mb=memory_mb, file_mb=file_mb)
        self.sources: dict[str, str] = {}
        self.restarts = 0
        self._lock = threading.Lock()
        self._template: _Process | None = _Process(self)  # starts loading now

    def close(self) -> None:
        with self._lock:
            if self._template:
                self._template.close()
            self._template = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def request(self, message: dict, timeout: float) -> dict:
        """One request in a fresh fork; a template that hangs, dies or misbehaves is replaced."""
        with self._lock:
            if self._template is None:
                self._template = _Process(self)
            try:
                return self._template.request(message, timeout)
            except SandboxError:
                self._template.close()
                self.restarts += 1
                self._template = _Process(self)
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
        """Load a tool's code in a fresh fork; returns the reason it was refused, or None."""
        refused = self.add(tool, source)
        if refused:
            self.sources.pop(tool, None)
            return refused
        try:
            reply = self.request({"op": "define", "tool": tool, "source": source}, timeout=10)
        except SandboxError as error:
            reply = {"ok": False, "error": f"the sandbox worker was killed: {error}".strip()}
        if not reply.get("ok"):
            self.sources.pop(tool, None)
            return str(reply.get("error"))
        return None

    def run_tests(self, tool: str, tests: list[dict]) -> list[dict]:
        """Run procedural tests of one defined tool in a fresh fork; verdicts are decided here."""
        if tool not in self.sources:
            return [_failed(t, f"tool {tool!r} is not defined") for t in tests]
        outcome = self.run_source(tool, self.sources[tool], tests)
        return [_failed(t, outcome) for t in tests] if isinstance(outcome, str) else outcome

    def run_source(self, tool: str, source: str, tests: list[dict],
                   stop_unless: list[str | None] | None = None) -> list[dict] | str:
        """Tests of `source` as the tool (a mutant, say) without recording it: each test's verdict,
        or why the code was refused before any test ran.

        `stop_unless` (a verdict.signature per test, or None) lets the worker stop at the first
        outcome whose signature differs: the verdicts then end at the first failed test, which is
        the first test that fails when all run. Every verdict is still decided here; a worker that
        stops with no failed test is not believed, and the tests run again in full."""
        try:
            check_source(source)
        except UnsafeCode as error:
            return f"refused by the sandbox: {error}"
        budget = self.timeout * len(tests) + 5
        message = {"op": "run", "tool": tool, "source": source, "tests": [inputs(t) for t in tests],
                   "timeout": self.timeout}
        if stop_unless is not None:
            message["stop_unless"] = list(stop_unless)
        try:
            reply = self.request(message, budget)
        except SandboxError as error:
            return [_failed(t, f"the sandbox worker was killed: {error}".strip()) for t in tests]
        if reply.get("refused"):
            return str(reply.get("error"))
        if not reply.get("ok"):
            return [_failed(t, str(reply.get("error"))) for t in tests]
        outcomes = reply.get("outcomes")
        stopped = stop_unless is not None and isinstance(outcomes, list) and 0 < len(outcomes) < len(tests)
        if not isinstance(outcomes, list) or (len(outcomes) != len(tests) and not stopped):
            return [_failed(t, "the sandbox worker sent a malformed reply") for t in tests]
        verdicts = [judge(test, outcome) for test, outcome in zip(tests, outcomes)]
        if stopped and all(v["passed"] for v in verdicts):
            return self.run_source(tool, source, tests)
        return verdicts


def _failed(test: dict, reason: str) -> dict:
    return {"name": test["name"], "kind": test["kind"], "passed": False, "problems": [reason]}
