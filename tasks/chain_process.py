"""Chain programs, the confined side: a template that holds nothing, and one fork per program.

Served by sandbox.template for tasks.chain_forks, with the CHAIN_PROGRAMS policy: no database and
no tool code. A fork gets two pipes from the parent, locks itself down (sandbox.child), keeps them
as descriptors 0 (replies in) and 3 (calls out), says it is ready with the layers it applied, and
only then reads its program. The program's only capability is `call(tool, **arguments)`, which
asks the parent (one JSON line out, one JSON line back); the parent runs the call in an episode
of the runtime. It ends with `{"done": true}` or `{"failed": ..., "traceback": ...}`.

A program of a task family reads its instance's parameters as `params`. A family's generator runs
the same way, with no `call` at all: its source defines `instance(rng, level)`, called here with
a `random.Random` seeded by the parent, and its result goes back as `{"instance": ...}` (JSON, or
a failure when it is not JSON).
"""

from __future__ import annotations

import json
import os
import random

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
        request = json.loads(_IN.readline())
        source, drawn = request["source"], request.get("instance")  # nothing read from here on is trusted
        try:
            if drawn is None:
                generated.run(compile(source, "<chain>", "exec"), "chain",
                              {"call": call, "ToolFailed": ToolFailed, "params": request.get("params") or {}},
                              self.where)
            else:
                _send({"instance": _instance(source, drawn["seed"], drawn["level"], self.where)})
                return
        except BaseException as error:  # the program may raise anything
            _send({"failed": f"{type(error).__name__}: {error}",
                   "traceback": generated.program_traceback(error, source, "<chain>")})
            return
        _send({"done": True})


def _instance(source: str, seed: int, level: int, where: str):
    """What the generator's `instance(rng, level)` returns, as plain JSON data."""
    namespace = generated.run(compile(source, "<chain>", "exec"), "generator", {}, where)
    make = namespace.get("instance")
    if not callable(make):
        raise TypeError("the generator defines no function instance(rng, level)")
    return json.loads(json.dumps(make(random.Random(seed), level), allow_nan=False))  # refuses what is not JSON
