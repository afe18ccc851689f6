"""A stdio MCP server over the bundled job_seeking domain that serves many task episodes in one process.

The domain's own server (`python -m mcp_servers NAME --task ID`) is one episode per process; this
one adds a `select://{task_id}` resource that starts the named task's episode, so that a test can
walk every bundled task through one server: tools, state and reward are the real server's.
"""

import sys

import anyio

from mcp_servers.runtime import Environment
from mcp_servers.server import build_server

env = Environment(sys.argv[1], workers=1)
current = {}


def episode():
    return current["episode"]


server = build_server(env, episode, expose_trainer_resources=True)  # the test reads state and reward


@server.resource("select://{task_id}")
def select(task_id: str) -> str:
    if "episode" in current:
        current["episode"].close()
    current["episode"] = env.create_episode(task_id)
    return task_id


anyio.run(lambda: server.run_stdio_async(show_banner=False, log_level="WARNING"))
