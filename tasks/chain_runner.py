"""The confined process that runs a chain program written by the model.

Started by tasks.execute through verification.confine as `python -I chain_runner.py <folder of
verification>`; it locks itself down (verification/lockdown.py) before it reads the program.
It holds no database and no tool code: the
program's only capability is `call(tool, **arguments)`, which asks the parent (one JSON line
out, one JSON line back), and the parent runs the call in an episode of the runtime.
"""

import builtins
import json
import os
import socket
import sys
import traceback

sys.path.insert(0, sys.argv[1])
import guard  # noqa: E402
import lockdown  # noqa: E402

_OUT = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # whatever the program prints goes to stderr, never into the protocol


def _refused(*_args, **_kwargs):
    raise PermissionError("network access is disabled for chain programs")


socket.socket = _refused
socket.create_connection = _refused


class ToolFailed(Exception):
    """A tool call the runtime answered with an error; it ends the chain unless the program catches it."""


def _send(message: dict) -> None:
    _OUT.write(json.dumps(message) + "\n")
    _OUT.flush()


def call(tool, **arguments):
    _send({"call": tool, "arguments": arguments})
    reply = json.loads(sys.stdin.readline())
    if not reply["ok"]:
        raise ToolFailed(f"{tool}: {reply['error_type']}: {reply['error']}")
    return reply["result"]


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or name.split(".")[0] not in guard.ALLOWED_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in a chain program")
    return builtins.__import__(name, globals, locals, fromlist, level)


def main() -> None:
    lockdown.lock_down()  # nothing read after this point is trusted
    source = json.loads(sys.stdin.readline())["source"]
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


main()
