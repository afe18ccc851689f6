"""Run generated code outside the orchestrator, in confined processes forked from a template.

One template per sandbox (verification.tool_worker, served by sandbox.template) is started through
sandbox.forkserver under the TOOL_TESTS policy. It loads the DB layer once and runs no generated
code itself: every request (define a tool, run its tests, integrity checks) is handled by a fresh
fork that locks itself down before it reads its request over a socket of its own and exits
after its reply. So no tool sees what another left behind (module globals, patched classes,
builtins, files in the scratch), and a tool under test costs a fork rather than an interpreter
start. The fork gets only the tests' inputs; verification.verdict decides pass or fail here.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import tempfile
import threading

from sandbox import protocol
from sandbox.forkserver import ForkServer, ForkServerError, check_layers, expected_layers
from sandbox.guard import UnsafeCode, check_source
from sandbox.policy import TOOL_TESTS, Policy
from verification.verdict import inputs, judge

MAX_REPLY_BYTES = 64 << 20
SERVICE = "verification.tool_worker"


class SandboxError(RuntimeError):
    """The template died, did not answer in time, or broke the protocol."""


class Sandbox:
    """A confined template for one domain's DB layer, and the tools recorded for it."""

    def __init__(self, db_source: str, timeout: float = 2.0, memory_mb: int = 1536, file_mb: int = 8,
                 policy: Policy = TOOL_TESTS):
        self.db_source, self.timeout = db_source, timeout
        self.policy = dataclasses.replace(policy, memory_mb=memory_mb, file_mb=file_mb)
        self.sources: dict[str, str] = {}
        self._dir = tempfile.mkdtemp(prefix="worldsmith-sandbox-")
        self._lock = threading.Lock()
        self.server = ForkServer(SERVICE, self.policy, log=os.path.join(self._dir, "template.log"),
                                 on_start=self._on_start)
        self._expected = expected_layers(self.policy)
        self._loaded = False
        self.server.start()  # starts in the background; the DB layer loads with the first request

    @property
    def restarts(self) -> int:
        """Templates replaced after they died or stopped answering."""
        return max(0, self.server.starts - 1)

    def _on_start(self) -> None:
        self._loaded = False
        if self.server.starts > 1:  # a replacement, in the middle of a request: load it now
            self._load_db_layer()

    def _load_db_layer(self) -> None:
        source = os.memfd_create("db.py")
        try:
            os.write(source, self.db_source.encode())
            os.lseek(source, 0, os.SEEK_SET)
            self.server.ask({"op": "init"}, [source], timeout=60)
        except ForkServerError as error:
            raise SandboxError(f"the DB layer does not load: {error}") from None
        finally:
            os.close(source)
        self._loaded = True

    def close(self) -> None:
        with self._lock:
            self.server.close()
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def request(self, message: dict, timeout: float) -> dict:
        """One request in a fresh fork, killed past `timeout` seconds; a template that hangs, dies
        or misbehaves is replaced (SandboxError)."""
        with self._lock:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                if not self._loaded:
                    self._load_db_layer()
                pid, pidfd = self.server.spawn({}, [theirs.fileno()], reap_here=True)
            except (ForkServerError, SandboxError) as error:
                ours.close()
                raise SandboxError(f"{error}\n{self.server.log_tail()}".strip()) from None
            finally:
                theirs.close()
            os.close(pidfd)
            channel = protocol.Channel(ours.makefile("wb"), ours.fileno(), MAX_REPLY_BYTES)
            try:
                reply, _blob = channel.request(message, timeout)
                missing = check_layers(reply.get("layers"), self._expected) if reply.get("ok") else ""
                if missing:
                    reply = {"ok": False, "error": f"the sandbox worker did not get its confinement layers: {missing}"}
            except protocol.WorkerTimeout:
                reply = {"ok": False, "error": f"the sandbox worker was killed: no answer within {timeout:g} s"}
            except protocol.ChannelError as error:
                reply = {"ok": False, "error": f"the sandbox worker was killed: {error}"}
            finally:
                channel.writer.close()
                ours.close()
                try:
                    self.server.reap(pid, clear=True)
                except ForkServerError as error:
                    raise SandboxError(str(error)) from None
            return reply

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
