"""The parent's handle on a template process (sandbox.template): the one fork server.

    server = ForkServer("verification.tool_worker", policy, on_start=load_db_layer)
    reply, fds = server.ask({"op": "init"}, [memfd])            # trusted work in the template
    pid, pidfd = server.spawn({"...": ...}, [their_socket])     # a fresh confined fork
    status, killed = server.reap(pid, grace=0.0)                # its exit; SIGKILL past the grace

The template is started through sandbox.launch (namespaces, cgroup, a uid for the tree) and
spoken to over a SOCK_SEQPACKET socket, descriptors passed with SCM_RIGHTS. One that dies or does
not answer is replaced (and `on_start` runs again) and the request tried once more. What a fork
says comes over the descriptors the parent gave it, never over this socket; a fork that lacks a
layer this machine gives is refused (`check_layers`).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from sandbox import probe
from sandbox.launch import SPEC_ENV, Confinement
from sandbox.policy import Policy
from sandbox.template import ENTRY

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
CONTROL_TIMEOUT_S = 10.0


class ForkServerError(RuntimeError):
    """The template died, did not answer in time, or refused a request."""


class ForkServer:
    def __init__(self, service: str, policy: Policy, *, args: tuple[str, ...] = (),
                 confinement: Confinement | None = None, unconfined: bool = False, log: str | None = None,
                 on_start: Callable[[], None] | None = None):
        self.service, self.policy, self.args = service, policy, args
        self.confinement = confinement or Confinement(policy)
        self.unconfined, self.log, self.on_start = unconfined, log, on_start
        self.starts = 0
        self.proc: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self._lock = threading.RLock()
        self.closing = False
        if self.policy.off:
            print(f"WARNING: confinement layers left off for a test: {', '.join(sorted(self.policy.off))}",
                  file=sys.stderr, flush=True)

    # -- the template process ------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            log = open(self.log, "ab") if self.log else None
            if log:
                os.fchmod(log.fileno(), 0o600)
            argv = [sys.executable, "-I", "-c", ENTRY, str(theirs.fileno()), self.service, *self.args]
            kwargs = {"stdin": subprocess.DEVNULL, "stdout": log or subprocess.DEVNULL,
                      "stderr": log or subprocess.DEVNULL, "env": ENV, "pass_fds": [theirs.fileno()]}
            try:
                if self.unconfined:
                    scratch = tempfile.mkdtemp(prefix="worldsmith-unconfined-")
                    spec = {**self.policy.spec(), "unconfined": True, "uid": None, "writable": [scratch]}
                    kwargs["env"] = {**ENV, SPEC_ENV: json.dumps(spec)}
                    self.proc = subprocess.Popen(argv, start_new_session=True, cwd=scratch, **kwargs)
                    self.proc.confinement = {"cgroup": None, "scratch": scratch}
                else:
                    self.proc = self.confinement.popen(argv, **kwargs)
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()
                if log:
                    log.close()
            self.control = ours
            self.starts += 1
            if self.on_start:
                self.on_start()

    def stop(self) -> None:
        """Kill the template's whole tree; `proc` stays, dead, until the next start replaces it."""
        with self._lock:
            if self.control is not None:
                self.control.close()
            self.control = None
            if self.proc is not None and not self.proc.__dict__.get("stopped"):
                Confinement.kill(self.proc)  # the whole tree, its cgroup and its scratch
                self.proc.stopped = True

    def restart(self) -> None:
        with self._lock:
            self.stop()
            self.start()

    def revive(self) -> None:
        """Replace the template if it is dead (checked again under the lock: no second restart)."""
        with self._lock:
            if not self.alive() and not self.closing:
                self.restart()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self) -> str:
        try:
            return Path(self.log).read_bytes()[-1500:].decode(errors="replace") if self.log else ""
        except OSError:
            return ""

    # -- requests ------------------------------------------------------------------------
    def _ask_once(self, message: dict, fds: list[int], timeout: float, start: bool) -> tuple[dict, list[int]]:
        if not self.alive():
            if not start:
                raise OSError("the template process is gone")
            self.stop()
            self.start()
        socket.send_fds(self.control, [json.dumps(message).encode()], list(fds))
        self.control.settimeout(timeout)
        data, got, _flags, _addr = socket.recv_fds(self.control, 1 << 16, 4)
        if not data:
            raise OSError("the template process closed its socket")
        reply = json.loads(data)
        if not isinstance(reply, dict):
            raise ValueError("the template process answered something that is not an object")
        return reply, got

    def ask(self, message: dict, fds: list[int] = (), timeout: float = CONTROL_TIMEOUT_S,
            retry: bool = True) -> tuple[dict, list[int]]:
        """The template's reply (and descriptors); a template that does not answer is replaced and
        asked once more (unless not `retry`: a request about a fork of the old one, say).
        ForkServerError when that fails too or the reply is not `ok`."""
        with self._lock:
            for attempt in (1, 2):
                try:
                    reply, got = self._ask_once(message, fds, timeout, retry)
                    break
                except (OSError, ValueError) as error:
                    if attempt == 2 or self.closing or not retry:
                        raise ForkServerError(f"the template process is not answering: {error}") from None
                    self.restart()
        if reply.get("ok") is not True:
            for fd in got:
                os.close(fd)
            raise ForkServerError(str(reply.get("error", "the template process refused the request")))
        return reply, got

    def spawn(self, child: dict, fds: list[int], *, uid: int | None = None, writable: str | None = None,
              reap_here: bool = False) -> tuple[int, int]:
        """A fresh confined fork serving `child` over `fds`: (pid in the template's namespace, pidfd).
        `uid`: its own uid (Policy.uid_per_child); `writable`: its own folder instead of the
        scratch; `reap_here`: its exit is collected by `reap`, not by the template alone."""
        message = {"op": "spawn", "child": child, "await": reap_here}
        if self.policy.uid_per_child:
            message["uid"] = uid
        if writable:
            message["writable"] = writable
        reply, got = self.ask(message, fds)
        if len(got) != 1 or not isinstance(reply.get("pid"), int):
            for fd in got:
                os.close(fd)
            raise ForkServerError("the template process sent no process handle")
        return reply["pid"], got[0]

    def reap(self, pid: int, grace: float = 0.0, clear: bool = True) -> tuple[int, bool]:
        """(wait status, whether it had to be killed) of a fork spawned with `reap_here`; `clear`
        empties the scratch for the next fork."""
        reply, _ = self.ask({"op": "reap", "pid": pid, "grace": grace, "clear": clear},
                            timeout=grace + CONTROL_TIMEOUT_S, retry=False)  # a new template never had it
        return int(reply["status"]), bool(reply["killed"])

    def close(self) -> None:
        self.closing = True
        self.stop()


def expected_layers(policy: Policy, identity: bool | None = None) -> set[str]:
    """The layers a fork must report: what this machine gives, less what the policy leaves off.
    `identity`: whether it gets a uid of its own (default: whether a probe child got one)."""
    found = probe.layers("namespaces" not in policy.off)
    out = {"dumpable"} | {name for name in ("landlock", "seccomp") if found[name]}
    if found["identity"] if identity is None else identity:
        out.add("identity")
    return out - policy.off


def check_layers(got, expected: set[str]) -> str:
    """'' when a fork applied every expected layer, else the names it lacks."""
    applied = set(got) if isinstance(got, list) else set()
    return ", ".join(sorted(expected - applied))


# -- a fork's process handle -----------------------------------------------------------------

def readable(fd: int, timeout_ms: int = 0) -> bool:
    poller = select.poll()  # not select(): a server with many forks has descriptors past 1024
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))


def any_readable(*fds: int) -> bool:
    poller = select.poll()  # one system call for all: a process's exit and its socket
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def alive(pidfd: int) -> bool:
    return not readable(pidfd)


def host_pid(pidfd: int) -> int | None:
    """The pid of a pidfd's process in this process's PID namespace."""
    try:
        for line in Path(f"/proc/self/fdinfo/{pidfd}").read_text().splitlines():
            if line.startswith("Pid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None
