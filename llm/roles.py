"""A model per role (ScaleEnv 5.1 gives each its own model): <ROLE>_MODEL overrides MODEL for the
steps of that role's stages, and `backend_for` builds the backend a `MODEL` setting asks for."""

from __future__ import annotations

import os

from llm.backends import litellm_backend
from llm.steps import Backend, StepKey, schema_arg

# The task stage's oracle steps (tasks/<task>.oracle<n>@...) are the oracle's.
ROLES = {"schema": ("schema", "database", "policy", "graph"), "code": ("code", "debug"),
         "test": ("tests", "mutants"), "task": ("tasks",), "oracle": (), "agent": ("agent",), "user": ("user",)}


def role_of(key: StepKey) -> str | None:
    if key.stage == "tasks" and ".oracle" in key.item:
        return "oracle"
    return next((role for role, stages in ROLES.items() if key.stage in stages), None)


def role_models(environ: dict | None = None) -> dict[str, str]:
    """The roles given their own model: SCHEMA_MODEL, CODE_MODEL, TEST_MODEL, TASK_MODEL,
    ORACLE_MODEL, AGENT_MODEL, USER_MODEL."""
    environ = os.environ if environ is None else environ
    return {role: environ[f"{role.upper()}_MODEL"] for role in ROLES if environ.get(f"{role.upper()}_MODEL")}


class RoleBackend:
    """MODEL's backend, with another for each role given its own model (`roles`: role -> model)."""

    def __init__(self, default: Backend, roles: dict[str, Backend]):
        self.default, self.roles = default, roles
        self.model = default.model

    def backend(self, key: StepKey) -> Backend:
        return self.roles.get(role_of(key) or "", self.default)

    def complete(self, key: StepKey, turn: int, messages: list[dict], **options) -> tuple[str, dict]:
        backend = self.backend(key)
        return backend.complete(key, turn, messages, **(options if "tools" in options else
                                                         schema_arg(backend, options.get("schema"))))


def model_for(backend: Backend, key: StepKey) -> str:
    """The model that answers `key` (recorded with each exchange)."""
    return backend.backend(key).model if isinstance(backend, RoleBackend) else backend.model


def backend_for(model: str | None, roles: dict[str, str] | None = None) -> Backend | None:
    """The backend for a `MODEL` setting; None means replay. `roles` (default: `role_models()`, from
    the environment) give roles their own models (see `litellm_backend` for the timeouts)."""
    if not model:
        return None
    roles = role_models() if roles is None else roles
    default = litellm_backend(model)
    if not any(m != model for m in roles.values()):
        return default
    return RoleBackend(default, {role: litellm_backend(m) for role, m in roles.items() if m != model})
