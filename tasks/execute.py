"""Run a chain program against an episode of the runtime and resolve it into tool calls.

The program is untrusted model output: it runs in tasks/chain_runner.py behind the operating
system's confinement (verification.confine), and every tool call it makes is served by the runtime (validated
arguments, one transaction per call in a sandbox worker). The parent records the calls that
succeeded: they are the reference solution.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import verification
from mcp_servers.runtime import Episode
from tasks.model import ToolCall
from verification.confine import Confinement
from verification.guard import UnsafeCode, check_source

RUNNER = Path(__file__).with_name("chain_runner.py")
GUARD_DIR = str(Path(verification.__file__).resolve().parent)


@dataclass
class ChainRun:
    calls: list[ToolCall] = field(default_factory=list)
    results: list = field(default_factory=list)
    error: str | None = None

    @property
    def tools(self) -> list[str]:
        return [c.tool for c in self.calls]


def run_chain(episode: Episode, source: str, timeout: float = 30.0, max_calls: int = 60,
              memory_mb: int = 512) -> ChainRun:
    """Execute `source` with `call(tool, **arguments)` bound to `episode`; a failure is reported, not raised."""
    out = ChainRun()
    try:
        check_source(source)
    except UnsafeCode as error:
        out.error = f"the program was refused: {error}"
        return out
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    confinement = Confinement(memory_mb=memory_mb, processes=4, scratch_mb=8, file_mb=1,
                              readable=(str(RUNNER.parent),))
    proc = confinement.popen([sys.executable, "-I", str(RUNNER), GUARD_DIR], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    deadline = time.monotonic() + timeout
    try:
        proc.stdin.write(json.dumps({"source": source}) + "\n")
        proc.stdin.flush()
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                out.error = f"the program ran longer than {timeout:g} s"
                return out
            line = proc.stdout.readline()
            if not line:
                out.error = f"the program's process died (exit {proc.poll()})"
                return out
            message = json.loads(line)
            if "call" not in message:
                if "failed" in message:
                    out.error = f"{message['failed']}\n{message.get('traceback', '')}".strip()
                return out
            if len(out.results) >= max_calls:
                out.error = f"the program made more than {max_calls} tool calls"
                return out
            tool, arguments = str(message["call"]), message.get("arguments") or {}
            result = episode.call(tool, arguments)
            out.results.append(result.result if result.ok else None)
            if result.ok:
                out.calls.append(ToolCall(tool=tool, arguments=arguments))
            proc.stdin.write(json.dumps(result.as_dict()) + "\n")
            proc.stdin.flush()
    except (BrokenPipeError, ValueError) as error:
        out.error = f"the program's process broke the protocol: {error}"
        return out
    finally:
        Confinement.kill(proc)
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
