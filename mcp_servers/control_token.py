"""The control API's credential: a bearer token the operator and the trainer hold, the agent never.

The server takes it from --token, else the WORLDSMITH_CONTROL_TOKEN environment variable, else
generates one at start and prints it to stderr. Trainer-side clients send it as
`Authorization: Bearer <token>` with every control request.
"""

from __future__ import annotations

import os
import secrets

TOKEN_ENV = "WORLDSMITH_CONTROL_TOKEN"
MIN_TOKEN_CHARS = 16


def check_token(token: str) -> str:
    """The token, if it is long enough to be a secret; else ValueError."""
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"the control token must have at least {MIN_TOKEN_CHARS} characters, not {len(token)}")
    return token


def server_token(given: str | None = None) -> tuple[str, bool]:
    """The server's token: `given`, else $WORLDSMITH_CONTROL_TOKEN, else a new random one (then True)."""
    token = given or os.environ.get(TOKEN_ENV)
    return (check_token(token), False) if token else (secrets.token_urlsafe(32), True)


def bearer(token: str) -> dict[str, str]:
    """The header a trainer's client sends with every control request."""
    return {"authorization": f"Bearer {token}"}
