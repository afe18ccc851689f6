"""python -m mcp_servers NAME[,NAME...]|SET|all [--task ID] [--transport stdio|http] [--host H] [--port P] [--token T] [--ray]

stdio: this process is one episode (the task's initial state, or the sample state).
http:  many episodes, created and closed through the control API (routes: mcp_servers/http_app.py);
       with --ray, held by Ray actors across a cluster (mcp_servers/ray_service.py). Several
       domains (names separated by commas, a set such as set_b, or all) are served by one
       server: POST /episodes names the domain (mcp_servers/universe.py).

Two channels. The agent's (stdio, or an episode's MCP URL) serves the tools and the
instructions only: no task, reference solution, reward or state. The trainer's is the control
API over HTTP, on the same address, and every control route needs `Authorization: Bearer
<token>`: the token is --token, else $WORLDSMITH_CONTROL_TOKEN, else one generated at start and
printed to stderr. The trainer's clients (trainers/control.py, `python -m rollouts --via mcp`)
read it from WORLDSMITH_CONTROL_TOKEN. --expose-trainer-resources puts the task, reward and
state on the agent's channel too, as MCP resources: for trainers and debugging only.
Nothing but MCP frames is written to stdout; messages go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from mcp_servers.control_token import TOKEN_ENV, server_token

if TYPE_CHECKING:
    from mcp_servers.runtime import Environment


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers", description="Serve a verified domain over MCP.",
        epilog="The agent's channel (stdio, or each episode's MCP URL) serves tools and instructions only. Over "
               "http every other route is the trainer's control API and needs 'Authorization: Bearer <token>' "
               f"(--token, ${TOKEN_ENV}, or the token printed to stderr at start); trainer clients read it from "
               f"${TOKEN_ENV}.")
    parser.add_argument("domain", help="a domain name under domains/, or a path to a domain folder; over http also "
                                       "several: names separated by commas, a set (set_a, set_b) or 'all'")
    parser.add_argument("--task", help="task id (domains/<name>/tasks/<id>.json); default: the sample state")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token", help=f"http: the control API's bearer token (16+ characters); default: "
                                        f"${TOKEN_ENV}, else a random one printed to stderr. A command-line value "
                                        "shows in the process list: prefer the environment variable")
    parser.add_argument("--expose-trainer-resources", action="store_true",
                        help="FOR TRAINERS AND DEBUGGING ONLY: also serve each episode's task (with its reference "
                             "solution), reward, state and info as episode:// MCP resources on the agent's channel, "
                             "to every client. Never give an agent such a server")
    parser.add_argument("--workers", type=int, help=argparse.SUPPRESS)  # accepted and ignored: one process per episode
    parser.add_argument("--call-timeout", type=float, default=5.0, help="wall-clock seconds per tool call")
    parser.add_argument("--max-calls", type=int, default=200, help="tool calls per episode (0: unlimited)")
    parser.add_argument("--max-episodes", type=int, default=4096, help="episodes open at once (http)")
    parser.add_argument("--max-processes", type=int, default=0,
                        help="episode processes running at once (per actor with --ray); past it the least recently "
                             "used idle episodes give up theirs and start one on their files at their next call "
                             "(0: no limit)")
    parser.add_argument("--idle-timeout", type=float, default=3600.0,
                        help="close http episodes unused for this many seconds (0: never)")
    parser.add_argument("--ray", action="store_true",
                        help="http: serve the episodes from Ray actors (mcp_servers/ray_service.py) on the cluster "
                             "$RAY_ADDRESS names, else on an embedded local Ray")
    parser.add_argument("--ray-actors", type=int, help="with --ray: how many actors (default: one per node)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, extra_routes: Callable[[Environment], list] | None = None) -> int:
    """`extra_routes(env)`: routes a caller serves beside the control API over http."""
    args = parse_args(argv)
    try:
        token, generated = server_token(args.token) if args.transport == "http" else ("", False)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from mcp_servers.runtime import Environment, EpisodeError, UnknownTask
    from sandbox.probe import ConfinementUnavailable

    options = {"call_timeout": args.call_timeout, "max_calls": args.max_calls or None,
               "max_episodes": args.max_episodes, "idle_timeout": args.idle_timeout if args.transport == "http" else None,
               "max_processes": args.max_processes or None}
    try:
        names = served_names(args.domain)
        if len(names) > 1:
            return _serve_many(args, names, options, token, generated, extra_routes)
        if args.ray and args.transport == "http":
            from mcp_servers.ray_service import RayEnvironment

            env = RayEnvironment(names[0], actors=args.ray_actors, **options)
        else:
            env = Environment(names[0], **options)
    except (FileNotFoundError, ValueError, LookupError, ConfinementUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        if args.task:
            env.task(args.task)  # fail before serving, not on the first request
        if args.transport == "stdio":
            from mcp_servers.server import build_server

            episode = env.create_episode(args.task)
            server = build_server(env, lambda: episode, args.expose_trainer_resources)
            anyio.run(lambda: server.run_stdio_async(show_banner=False, log_level="WARNING"))
        else:

            from mcp_servers.http_app import create_app

            app = create_app(env, default_task=args.task, token=token,
                             expose_trainer_resources=args.expose_trainer_resources,
                             extra_routes=extra_routes(env) if extra_routes else ())
            _run_http(app, args, f"{env.name} ({len(env.tools)} tools)", token, generated)
    except (UnknownTask, EpisodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        env.close()
    return 0


def served_names(domain: str) -> list[str]:
    """The path given, or the bundled domains a list names (LookupError naming what there is)."""
    from domains import registry

    if Path(domain, "spec.json").is_file():
        return [domain]
    return registry.require_bundled(registry.expand(domain))


def _serve_many(args: argparse.Namespace, names: list[str], options: dict, token: str, generated: bool,
                extra_routes) -> int:
    """Several domains over http from one server; what only one domain can have is refused."""
    if args.transport != "http" or args.ray or args.task or extra_routes:
        what = ("stdio" if args.transport != "http" else "--ray" if args.ray else "--task" if args.task
                else "this server's extra routes")
        print(f"error: {what} serves one domain; {len(names)} were named ({', '.join(names)})", file=sys.stderr)
        return 2
    from mcp_servers.http_app import create_app
    from mcp_servers.universe import Universe

    universe = Universe(names, **options)
    try:
        app = create_app(universe, token=token, expose_trainer_resources=args.expose_trainer_resources)
        tools = sum(len(env.tools) for env in universe.environments.values())
        _run_http(app, args, f"{len(names)} domains ({', '.join(names)}; {tools} tools)", token, generated)
    except KeyboardInterrupt:
        pass
    finally:
        universe.close()
    return 0


def _run_http(app, args: argparse.Namespace, what: str, token: str, generated: bool) -> None:
    import uvicorn

    print(f"serving {what} at http://{args.host}:{args.port}; POST /episodes to start an episode", file=sys.stderr)
    if generated:  # to the operator only: stderr, never an MCP stream
        print(f"control API token (send 'Authorization: Bearer <token>'; trainers read {TOKEN_ENV}): "
              f"{token}", file=sys.stderr)
    if args.expose_trainer_resources:
        print("warning: --expose-trainer-resources: every episode's MCP URL serves its task, reward and "
              "state", file=sys.stderr)
    sys.stderr.flush()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    sys.exit(main())
