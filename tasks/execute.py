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
              memory_mb: int = 512, policy: Policy = CHAIN_PROGRAMS, params: dict | None = None) -> ChainRun:
    """Execute `source` with `call(tool, **arguments)` bound to `episode` (and `params`, a task
    family's instance parameters); a failure is reported, not raised. `policy` is the chain
    programs' own, but for tests that leave a layer off."""
    out = ChainRun()
    request = {"source": source, **({"params": params} if params is not None else {})}
    out.error = _in_fork(request, memory_mb, policy,
                         lambda fork, template: _serve(episode, request, fork, template, out, timeout, max_calls))
    return out


def run_generator(source: str, seed: int, level: int, timeout: float = 10.0, memory_mb: int = 512,
                  policy: Policy = CHAIN_PROGRAMS) -> tuple[object, str | None]:
    """(what a family generator's `instance(rng, level)` returned, None), or (None, the failure): run
    confined exactly as a chain program is, with no tool to call."""
    request = {"source": source, "instance": {"seed": seed, "level": level}}
    got: list = [None]

    def serve(fork: Fork, template: ChainTemplate) -> str | None:
        deadline = time.monotonic() + timeout
        try:
            if not fork.send(json.dumps(request) + "\n", deadline) or (line := fork.receive(deadline)) is None:
                return f"the generator ran longer than {timeout:g} s"
            if not line:
                return f"the generator's process died (exit {template.finish(fork, grace=1.0)})"
            message = json.loads(line)
        except (BrokenPipeError, ValueError) as error:
            return f"the generator's process broke the protocol: {error}"
        if isinstance(message, dict) and "failed" in message:
            return f"{message['failed']}\n{message.get('traceback', '')}".strip()
        if not isinstance(message, dict) or "instance" not in message:
            return f"the generator's process broke the protocol: not an instance: {line[:80].strip()}"
        got[0] = message["instance"]
        return None

    error = _in_fork(request, memory_mb, policy, serve)
    return got[0], error


def _in_fork(request: dict, memory_mb: int, policy: Policy, serve) -> str | None:
    """Run `serve(fork, template)` on a fresh confined fork after the static check of the request's
    source; the failure it returns, or the check's or the fork's."""
    try:
        check_source(request["source"])
    except UnsafeCode as error:
        return f"the program was refused: {error}"
    with _lock:
        template = template_for(memory_mb, policy)
        try:
            fork = template.fork()
        except TemplateError as error:
            return f"the program's process did not start: {error}"
        try:
            return serve(fork, template)
        finally:
            template.finish(fork)


def _serve(episode: Episode, request: dict, fork: Fork, template: ChainTemplate, out: ChainRun, timeout: float,
           max_calls: int) -> str | None:
    """Send the program, then serve its calls until it is done, fails, dies or runs out of time; the
    failure, or None."""
    deadline = time.monotonic() + timeout
    late = f"the program ran longer than {timeout:g} s"
    try:
        if not fork.send(json.dumps(request) + "\n", deadline):
            return late
        while True:
            line = fork.receive(deadline)
            if line is None:
                return late
            if not line:
                return f"the program's process died (exit {template.finish(fork, grace=1.0)})"
            message = json.loads(line)
            if not isinstance(message, dict) or not isinstance(message.get("arguments", {}), dict):
                raise ValueError(f"not a call, a failure or the end: {line[:80].strip()}")
            if "call" not in message:
                if "failed" in message:
                    return f"{message['failed']}\n{message.get('traceback', '')}".strip()
                return None
            if len(out.results) >= max_calls:
                return f"the program made more than {max_calls} tool calls"
            tool, arguments = str(message["call"]), message.get("arguments") or {}
            result = episode.call(tool, arguments)
            out.results.append(result.result if result.ok else None)
            if result.ok:
                out.calls.append(ToolCall(tool=tool, arguments=arguments))
            if not fork.send(json.dumps(result.as_dict()) + "\n", deadline):
                return late
    except (BrokenPipeError, ValueError) as error:
        return f"the program's process broke the protocol: {error}"


@atexit.register
def close() -> None:
    """Stop the templates (the task stage calls this when it ends; atexit otherwise)."""
    for template in list(_templates.values()):
        template.close()
    _templates.clear()
