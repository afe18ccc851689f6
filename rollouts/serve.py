"""python -m rollouts.serve NAME [--user-model M | --user-answers FILE | --user-transcript FILE] [server options]

A domain's HTTP MCP server (`python -m mcp_servers NAME --transport http`, the same options)
with the simulated user's route beside its control API (rollouts/user_api.py), for trainers
whose episodes talk to a user. The user: USER_MODEL / --user-model (litellm; --user-record FILE
keeps its exchanges), scripted answers, a recorded transcript replayed, or by default the user
that ends the conversation at the agent's first message to it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mcp_servers.__main__ import main as serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rollouts.serve", description=__doc__.splitlines()[0],
                                     epilog="Every other option is python -m mcp_servers's (--port, --host, ...).")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--user-model", default=os.environ.get("USER_MODEL") or None,
                     help="litellm model playing the user (default: $USER_MODEL)")
    who.add_argument("--user-answers", type=Path, help="JSON: step key user/<task>@0/<turn> -> {\"message\": ...}")
    who.add_argument("--user-transcript", type=Path, help="a recorded transcript whose user steps are replayed")
    parser.add_argument("--user-record", type=Path, help="with a user model: the transcript file its exchanges go to")
    parser.add_argument("--transport", choices=["http"], default="http", help="http only: the user has a route")
    args, rest = parser.parse_known_args(argv)
    from rollouts.user_api import user_for, user_routes

    def routes(env):
        return user_routes(env, user_for(env, args.user_model, args.user_answers, args.user_transcript,
                                         args.user_record))

    return serve([*rest, "--transport", "http"], extra_routes=routes)


if __name__ == "__main__":
    sys.exit(main())
