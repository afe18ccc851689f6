"""The confined template that forks one fresh process per chain program written by the model.

Started by tasks/chain_template.py through verification.confine as
`python -I chain_runner.py <folder of verification> <control fd>`. The template never sees a
program: it takes the confinement spec once, then answers on its control socket (SOCK_SEQPACKET,
file descriptors passed with SCM_RIGHTS):

  run  {memory_mb, processes} + [reply pipe, call pipe] -> {pid}    a fresh fork for one program
  reap {pid, grace}                                     -> {status, killed}

The fork closes every descriptor but its two pipes, locks itself down (verification/lockdown.py:
identity, limits, Landlock, seccomp) and only then reads the program. It holds no database and
no tool code: the program's only capability is `call(tool, **arguments)`, which asks the parent
(one JSON line out, one JSON line back), and the parent runs the call in an episode of the
runtime. Reaping kills the fork if it still runs and empties the scratch, so no program sees
what another left behind.
"""

import builtins
import errno  # noqa: F401  (errno, platform, resource: lock_down's own imports, done once here, not per fork)
import json
import os
import platform
import resource  # noqa: F401
import signal
import socket
import sys
import time
import traceback

sys.path.insert(0, sys.argv[1])
import guard  # noqa: E402
import lockdown  # noqa: E402

_IN = _OUT = None  # the fork's protocol streams


class ToolFailed(Exception):
    """A tool call the runtime answered with an error; it ends the chain unless the program catches it."""


def _send(message: dict) -> None:
    _OUT.write(json.dumps(message) + "\n")
    _OUT.flush()


def call(tool, **arguments):
    _send({"call": tool, "arguments": arguments})
    reply = json.loads(_IN.readline())
    if not reply["ok"]:
        raise ToolFailed(f"{tool}: {reply['error_type']}: {reply['error']}")
    return reply["result"]


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or name.split(".")[0] not in guard.ALLOWED_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in a chain program")
    return builtins.__import__(name, globals, locals, fromlist, level)


def _refused(*_args, **_kwargs):
    raise PermissionError("network access is disabled for chain programs")


def _run_program(replies: int, calls: int, spec: dict) -> None:
    """In the fork: keep only the two pipes, confine, then read and run the program."""
    global _IN, _OUT
    lockdown.libc().prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: never outlive the template
    os.dup2(replies, 0)
    os.dup2(calls, 3)
    os.closerange(4, 1 << 16)  # the control socket and anything else the template holds
    _IN, _OUT = os.fdopen(0, "r"), os.fdopen(3, "w")  # stdout and stderr stay /dev/null
    socket.socket = _refused
    socket.create_connection = _refused
    lockdown.lock_down(spec)  # nothing read after this point is trusted
    source = json.loads(_IN.readline())["source"]
    safe = {k: v for k, v in vars(builtins).items() if k not in guard.FORBIDDEN_NAMES}
    safe["__import__"] = _guarded_import
    namespace = {"__builtins__": safe, "__name__": "chain", "call": call, "ToolFailed": ToolFailed}
    try:
        exec(compile(source, "<chain>", "exec"), namespace)
    except BaseException as error:  # the program may raise anything
        lines = source.splitlines() + [""]
        frames = [f"line {f.lineno}: {lines[f.lineno - 1].strip()}" for f in traceback.extract_tb(error.__traceback__)
                  if f.filename == "<chain>"]
        _send({"failed": f"{type(error).__name__}: {error}", "traceback": "\n".join(frames)[-1500:]})
        return
    _send({"done": True})


def _fork(message: dict, fds: list[int], spec: dict) -> dict:
    limits = {"memory_mb": int(message["memory_mb"]), "processes": int(message["processes"])}
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _run_program(fds[0], fds[1], {**spec, **limits})
            code = 0
        finally:
            os._exit(code)  # never back into the template's loop
    return {"ok": True, "pid": pid}


def _reap(pid: int, grace: float) -> dict:
    """The fork's wait status, after `grace` seconds to exit by itself, then SIGKILL."""
    deadline = time.monotonic() + grace
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or time.monotonic() >= deadline:
            break
        time.sleep(0.005)
    killed = not done
    if killed:
        os.kill(pid, signal.SIGKILL)  # still a child of ours until reaped: the pid cannot be reused
        _, status = os.waitpid(pid, 0)
    return {"ok": True, "status": status, "killed": killed}


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[2]))
    spec = lockdown.take_spec()  # each fork applies it; the template runs no program itself
    scratch = (spec.get("writable") or [None])[0]
    keep = frozenset(os.listdir(scratch)) if scratch else frozenset()
    lockdown.libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: a fork cannot open the template's memory
    platform.machine()  # cached: lock_down asks it in every fork
    while True:
        data, fds, _flags, _addr = socket.recv_fds(control, 1 << 16, 2)
        if not data:
            return
        try:
            message = json.loads(data)
            if message.get("op") == "run" and len(fds) == 2:
                reply = _fork(message, fds, spec)
            elif message.get("op") == "reap":
                reply = _reap(int(message["pid"]), float(message.get("grace", 0)))
                lockdown.clear_scratch(scratch, keep)
            else:
                reply = {"ok": False, "error": f"unknown request {message.get('op')!r} with {len(fds)} descriptors"}
        except Exception as error:
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        finally:
            for fd in fds:
                os.close(fd)
        control.send(json.dumps(reply).encode())


main()
