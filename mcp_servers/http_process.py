"""`python -m mcp_servers DOMAIN --transport http` in a child process, for a trainer-side caller.

    with http_server("job_seeking", "--max-calls", "0") as served:
        httpx.post(f"{served.url}/episodes", headers=served.headers, json={"task_id": ...})

A fresh control token is made for each server and handed to the child in its environment
(never on its command line, where the process list shows it); the caller gets it back beside the
URL. Used by `python -m rollouts --via mcp`, the trainer adapters' tests and the benchmarks.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp_servers.control_token import TOKEN_ENV, bearer

ROOT = Path(__file__).resolve().parent.parent  # where `-m mcp_servers` imports from


@dataclass(frozen=True)
class Served:
    """A running server: its base URL and the control token its trainer sends."""

    url: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return bearer(self.token)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def http_server(domain: str | Path, *options: str, startup_s: float = 120.0, quiet: bool = False,
                module: str = "mcp_servers") -> Iterator[Served]:
    """The server, once its /health answers, until the block ends; RuntimeError (with the end of
    its stderr) when it exits or does not come up within `startup_s`. `quiet` discards its stderr;
    `module` is the command run with -m (one taking `python -m mcp_servers`'s options)."""
    import httpx

    port = free_port()
    served = Served(f"http://127.0.0.1:{port}", secrets.token_urlsafe(32))
    command = [sys.executable, "-m", module, str(domain), "--transport", "http", "--port", str(port), *options]
    server = subprocess.Popen(command, cwd=ROOT, env={**os.environ, TOKEN_ENV: served.token}, text=True,
                              stderr=subprocess.DEVNULL if quiet else subprocess.PIPE)
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"the MCP server exited: {'' if quiet else server.stderr.read()[-2000:]}")
            try:
                if httpx.get(f"{served.url}/health", headers=served.headers, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the MCP server did not come up within {startup_s:.0f} s")
            time.sleep(0.1)
        yield served
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
