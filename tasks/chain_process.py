"""Chain programs, the confined side: a template that holds nothing, and one fork per program.

Served by sandbox.template for tasks.chain_forks, with the CHAIN_PROGRAMS policy: no database and
no tool code. A fork gets two pipes from the parent, locks itself down (sandbox.child), keeps them
as descriptors 0 (replies in) and 3 (calls out), says it is ready with the layers it applied, and
only then reads its program. The program's only capability is `call(tool, **arguments)`, which
asks the parent (one JSON line out, one JSON line back); the parent runs the call in an episode
of the runtime. It ends with `{"done": true}` or `{"failed": ..., "traceback": ...}`.
"""

from __future__ import annotations

import json
import os

from sandbox import generated
from sandbox.template import Service as TemplateService

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


class Service(TemplateService):
    where = "in a chain program"

    def child(self, message: dict, fds: list[int], layers: list[str]) -> None:
        global _IN, _OUT
        replies, calls = fds
        os.dup2(replies, 0)
        os.dup2(calls, 3)
        for fd in {replies, calls} - {0, 3}:
            os.close(fd)
        _IN, _OUT = os.fdopen(0, "r"), os.fdopen(3, "w")
        _send({"ready": True, "layers": layers})
        source = json.loads(_IN.readline())["source"]  # nothing read from here on is trusted
        try:
            generated.run(compile(source, "<chain>", "exec"), "chain", {"call": call, "ToolFailed": ToolFailed},
                          self.where)
        except BaseException as error:  # the program may raise anything
            _send({"failed": f"{type(error).__name__}: {error}",
                   "traceback": generated.program_traceback(error, source, "<chain>")})
            return
        _send({"done": True})
