"""Run a chain program against an episode of the runtime and resolve it into tool calls.

The program is untrusted model output: it runs in a fresh process forked from a confined template
(tasks.chain_forks, tasks.chain_process) behind the operating system's confinement (the sandbox
package, CHAIN_PROGRAMS policy), and every tool call it makes is served by the runtime (validated
arguments, one transaction per call in a sandbox worker). The parent records the calls that
succeeded: they are the reference solution.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import threading
import time
from dataclasses import dataclass, field

from domains.task_model import ToolCall
from mcp_servers.runtime import Episode
from sandbox.guard import UnsafeCode, check_source
from sandbox.policy import CHAIN_PROGRAMS, Policy
from tasks.chain_forks import ChainTemplate, Fork, TemplateError

_templates: dict[Policy, ChainTemplate] = {}  # by policy (its memory limit included), started on first use
_lock = threading.Lock()  # one program at a time: forks share their template's cgroup and scratch


@dataclass
class ChainRun:
    calls: list[ToolCall] = field(default_factory=list)
    results: list = field(default_factory=list)
    error: str | None = None

    @property
    def tools(self) -> list[str]:
        return [c.tool for c in self.calls]


def template_for(memory_mb: int = 512, policy: Policy = CHAIN_PROGRAMS) -> ChainTemplate:
    """The template that runs programs under `policy` with `memory_mb`, started on first use."""
    key = dataclasses.replace(policy, memory_mb=memory_mb)
    if key not in _templates:
        _templates[key] = ChainTemplate(memory_mb, policy=policy)
    return _templates[key]


def run_chain(episode: Episode, source: str, timeout: float = 30.0, max_calls: int = 60,
              memory_mb: int = 512, policy: Policy = CHAIN_PROGRAMS) -> ChainRun:
    """Execute `source` with `call(tool, **arguments)` bound to `episode`; a failure is reported, not
    raised. `policy` is the chain programs' own, but for tests that leave a layer off."""
    out = ChainRun()
    try:
        check_source(source)
    except UnsafeCode as error:
        out.error = f"the program was refused: {error}"
        return out
    with _lock:
        template = template_for(memory_mb, policy)
        try:
            fork = template.fork()
        except TemplateError as error:
            out.error = f"the program's process did not start: {error}"
            return out
        try:
            _serve(episode, source, fork, template, out, timeout, max_calls)
        finally:
            template.finish(fork)
    return out


def _serve(episode: Episode, source: str, fork: Fork, template: ChainTemplate, out: ChainRun, timeout: float,
           max_calls: int) -> None:
    """Send the program, then serve its calls until it is done, fails, dies or runs out of time."""
    deadline = time.monotonic() + timeout
    late = f"the program ran longer than {timeout:g} s"
    try:
        if not fork.send(json.dumps({"source": source}) + "\n", deadline):
            out.error = late
            return
        while True:
            line = fork.receive(deadline)
            if line is None:
                out.error = late
                return
            if not line:
                out.error = f"the program's process died (exit {template.finish(fork, grace=1.0)})"
                return
            message = json.loads(line)
            if not isinstance(message, dict) or not isinstance(message.get("arguments", {}), dict):
                raise ValueError(f"not a call, a failure or the end: {line[:80].strip()}")
            if "call" not in message:
                if "failed" in message:
                    out.error = f"{message['failed']}\n{message.get('traceback', '')}".strip()
                return
            if len(out.results) >= max_calls:
                out.error = f"the program made more than {max_calls} tool calls"
                return
            tool, arguments = str(message["call"]), message.get("arguments") or {}
            result = episode.call(tool, arguments)
            out.results.append(result.result if result.ok else None)
            if result.ok:
                out.calls.append(ToolCall(tool=tool, arguments=arguments))
            if not fork.send(json.dumps(result.as_dict()) + "\n", deadline):
                out.error = late
                return
    except (BrokenPipeError, ValueError) as error:
        out.error = f"the program's process broke the protocol: {error}"


@atexit.register
def close() -> None:
    """Stop the templates (the task stage calls this when it ends; atexit otherwise)."""
    for template in list(_templates.values()):
        template.close()
    _templates.clear()
