"""python -m mcp_servers NAME [--task ID] [--transport stdio|http] [--host H] [--port P]

stdio: this process is one episode (the task's initial state, or the sample state).
http:  many episodes, created and closed through the control API (routes: mcp_servers/http_app.py).
Nothing but MCP frames is written to stdout; messages go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from mcp_servers.runtime import Environment


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers", description="Serve a verified domain over MCP.")
    parser.add_argument("domain", help="a domain name under domains/, or a path to a domain folder")
    parser.add_argument("--task", help="task id (domains/<name>/tasks/<id>.json); default: the sample state")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, help=argparse.SUPPRESS)  # accepted and ignored: one process per episode
    parser.add_argument("--call-timeout", type=float, default=5.0, help="wall-clock seconds per tool call")
    parser.add_argument("--max-calls", type=int, default=200, help="tool calls per episode (0: unlimited)")
    parser.add_argument("--max-episodes", type=int, default=4096, help="episodes open at once (http)")
    parser.add_argument("--idle-timeout", type=float, default=3600.0,
                        help="close http episodes unused for this many seconds (0: never)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, extra_routes: Callable[[Environment], list] | None = None) -> int:
    """`extra_routes(env)`: routes a caller serves beside the control API over http."""
    args = parse_args(argv)
    from mcp_servers.runtime import Environment, EpisodeError, UnknownTask
    from verification.confine import ConfinementUnavailable

    try:
        env = Environment(args.domain, call_timeout=args.call_timeout,
                          max_calls=args.max_calls or None, max_episodes=args.max_episodes,
                          idle_timeout=args.idle_timeout if args.transport == "http" else None)
    except (FileNotFoundError, ValueError, ConfinementUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        if args.task:
            env.task(args.task)  # fail before serving, not on the first request
        if args.transport == "stdio":
            from mcp_servers.server import build_server

            episode = env.create_episode(args.task)
            server = build_server(env, lambda: episode)
            anyio.run(lambda: server.run_stdio_async(show_banner=False, log_level="WARNING"))
        else:
            import uvicorn

            from mcp_servers.http_app import create_app

            app = create_app(env, default_task=args.task, extra_routes=extra_routes(env) if extra_routes else [])
            print(f"serving {env.name} ({len(env.tools)} tools) at http://{args.host}:{args.port}; "
                  f"POST /episodes to start an episode", file=sys.stderr, flush=True)
            uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except (UnknownTask, EpisodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
