"""The template process: a service loaded once, then one confined fork per request of the parent.

Started by sandbox.forkserver through sandbox.launch as
`python -I -c ENTRY <control fd> <service module> [args...]`. The service module (a module of
the project beside this package, e.g. `verification.tool_worker`) defines `Service`, a subclass of
`Service` below. The template imports it, loads what generated code will need (sandbox.generated
.preload), and answers on its control socket (SOCK_SEQPACKET, descriptors passed with SCM_RIGHTS):

  spawn {child, uid?, writable?, await?} + [fds] -> {pid} + [pidfd]   a fork running Service.child
  reap  {pid, grace, clear}                      -> {status, killed}  its exit, then an empty scratch
  <op>  {...} + [fds]                            -> Service.ops[op]   trusted work in the template

The template runs no generated code and confines nothing of itself; each fork runs the one
child skeleton (sandbox.child): close every other descriptor, lock down, then serve.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable

from sandbox import child, generated, heap, launch
from sandbox.policy import ROOT, Policy

ENTRY = f"import sys; sys.path.insert(0, {ROOT!r}); from sandbox.template import main; main()"
_PR_SET_DUMPABLE = 4


class Service:
    """What a template serves. `ops` run in the template (trusted input only: the parent's); `child`
    runs in a confined fork with the descriptors the parent passed, after the lock-down."""

    where = "in the sandbox"  # how refusals name the place ("import of 'os' is not allowed in the sandbox")

    def __init__(self, args: list[str], policy: Policy | None) -> None:
        self.args, self.policy = args, policy
        self.ops: dict[str, Callable[[dict, list[int]], dict]] = {}

    def child(self, message: dict, fds: list[int], layers: list[str]) -> None:
        raise NotImplementedError


def clear_scratch(folder: str | None, keep: frozenset[str] = frozenset()) -> None:
    """Empty a template's scratch folder between forks: nothing one untrusted run leaves is seen by
    the next. `keep` are the entries it held before any fork ran: where the checkout lies under
    /tmp, bubblewrap's folders for its read-only binds, which are not walked (0.65 s a fork)."""
    if not folder:
        return
    for name in set(os.listdir(folder)) - keep:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            for root, subdirs, _files in os.walk(path):  # a folder made unwritable is opened first
                for sub in [root] + [os.path.join(root, d) for d in subdirs]:
                    try:
                        os.chmod(sub, 0o700)
                    except OSError:
                        pass
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


class Template:
    def __init__(self, control: socket.socket, service: Service, spec: dict) -> None:
        self.control, self.service, self.spec = control, service, spec
        self.scratch = (spec.get("writable") or [None])[0]
        self.keep = frozenset(os.listdir(self.scratch)) if self.scratch else frozenset()
        self.awaited: set[int] = set()  # forks the parent reaps through us
        self.exited: dict[int, int] = {}

    def collect(self) -> None:
        """Reap exited forks (the parent learns of exits from their pidfds); keep awaited statuses."""
        try:
            while True:
                pid, status = os.waitpid(-1, os.WNOHANG)
                if not pid:
                    return
                if pid in self.awaited:
                    self.exited[pid] = status
        except ChildProcessError:
            pass

    def spawn(self, message: dict, fds: list[int]) -> tuple[dict, list[int]]:
        spec = dict(self.spec)
        if "uid" in message:
            spec["uid"] = message["uid"]
        if message.get("writable"):
            spec["writable"] = [message["writable"], "/dev/null"]
        template_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            child.run(self.service, message.get("child") or {}, fds, spec, template_pid)
        if message.get("await"):
            self.awaited.add(pid)
        return {"ok": True, "pid": pid}, [os.pidfd_open(pid)]

    def reap(self, message: dict) -> dict:
        """The fork's wait status, after `grace` seconds to exit by itself, then SIGKILL."""
        pid, deadline = int(message["pid"]), time.monotonic() + float(message.get("grace", 0))
        killed = False
        while pid not in self.exited:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                self.exited[pid] = status
            elif time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)  # still a child of ours until reaped: the pid cannot be reused
                self.exited[pid] = os.waitpid(pid, 0)[1]
                killed = True
            else:
                time.sleep(0.002)
        self.awaited.discard(pid)
        if message.get("clear"):
            clear_scratch(self.scratch, self.keep)
        return {"ok": True, "status": self.exited.pop(pid), "killed": killed}

    def handle(self, message: dict, fds: list[int]) -> tuple[dict, list[int]]:
        op = message.get("op")
        if op == "spawn":
            return self.spawn(message, fds)
        if op == "reap":
            return self.reap(message), []
        if op in self.service.ops:
            reply = self.service.ops[op](message, fds)
            heap.settle()  # the holes the op left in the C heap: forks allocate fresh pages instead
            gc.freeze()  # what the op loaded stays shared with the forks instead of being copied
            return reply, []
        return {"ok": False, "error": f"unknown op {op!r} with {len(fds)} descriptors"}, []

    def serve(self) -> None:
        while True:
            self.collect()
            data, fds, _flags, _addr = socket.recv_fds(self.control, 1 << 20, 8)
            if not data:
                return
            reply_fds: list[int] = []
            try:
                reply, reply_fds = self.handle(json.loads(data), fds)
            except Exception as error:
                reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            finally:
                for fd in fds:
                    os.close(fd)
            socket.send_fds(self.control, [json.dumps(reply).encode()], reply_fds)
            for fd in reply_fds:
                os.close(fd)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    spec = launch.take_spec()  # each fork applies it; the template runs no generated code itself
    module = importlib.import_module(sys.argv[2])
    service = module.Service(sys.argv[3:], Policy.from_spec(spec))
    generated.preload()
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # a fork cannot open the template's memory
    heap.settle()  # forks' C allocations come from fresh pages, not from holes among the template's
    gc.freeze()  # objects made so far are never collected, so forks leave their pages shared
    Template(control, service, spec).serve()
