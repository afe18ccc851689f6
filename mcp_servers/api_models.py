"""The HTTP control API's published models and the OpenAPI document built from them (bearer auth).

Every request body is parsed by these models (pydantic's JSON parser: no NaN, a nesting
limit, strict types), so a body the API does not accept gets a 400 with the reasons, never
a 500. The OpenAPI document at /openapi.json is generated from the same models, which is
what the fuzz test (schemathesis) exercises.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
DOMAIN_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
MAX_BODY_BYTES = 65_536


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CreateEpisode(_Strict):
    """POST /episodes: every field optional; no task_id means the server's --task, else the sample
    state; no domain, the only one served."""

    domain: str | None = Field(None, pattern=DOMAIN_PATTERN,
                               description="a served domain (GET /domains); optional when one is served")
    task_id: str | None = Field(None, pattern=ID_PATTERN, description="a task id of the domain")
    episode_id: str | None = Field(None, pattern=ID_PATTERN, description="an id for the new episode; default: random")


class RewardRequest(_Strict):
    """POST /episodes/{id}/reward: the agent's final message, which an answer task's facts are read from."""

    final_message: str = Field("", max_length=32_768, description="the agent's last message to the user")


class Error(BaseModel):
    error: str = Field(description="what was wrong, for a person to read")


class EpisodeInfo(BaseModel):
    episode_id: str
    domain: str
    task_id: str | None
    calls: int
    max_calls: int | None
    call_timeout_s: float
    closed: bool
    now: str = Field(description="the episode clock the tools read (YYYY-MM-DDTHH:MM:SS)")


class CreatedEpisode(EpisodeInfo):
    mcp_url: str = Field(description="the episode's MCP endpoint (streamable HTTP, stateless)")
    instruction: str | None = None
    user_profile: str | None = None


class EpisodeList(BaseModel):
    episodes: list[EpisodeInfo]


class Closed(BaseModel):
    episode_id: str
    closed: bool


class Health(BaseModel):
    ok: bool = Field(description="false while any episode process is being restored or the template is down")
    domain: str = Field(description="the served domain, or the served domains' names joined by commas")
    domains: list[str]
    episodes: int
    tools: int
    restoring: int = Field(description="episodes whose process died and is being replaced")
    restarts: int = Field(description="episode processes replaced since the server started")


class TaskList(BaseModel):
    tasks: list[str]


class ServedDomain(BaseModel):
    name: str
    tools: int
    tasks: int


class DomainList(BaseModel):
    domains: list[ServedDomain]


def parse_body(model: type[BaseModel], body: bytes) -> BaseModel | str:
    """The validated body, or a message saying what is wrong with it."""
    if len(body) > MAX_BODY_BYTES:
        return f"the body is {len(body):,} bytes; the limit is {MAX_BODY_BYTES:,}"
    try:
        return model.model_validate_json(body or b"{}")
    except ValidationError as error:
        problems = []
        for e in error.errors(include_url=False):
            where = ".".join(str(p) for p in e["loc"]) or "body"
            problems.append(f"{where}: {e['msg']}")
        return "invalid body: " + "; ".join(problems[:5])


def _ref(model: type[BaseModel]) -> dict:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _answer(description: str, model: type[BaseModel] | None = None, schema: dict | None = None) -> dict:
    content = schema if schema is not None else _ref(model) if model is not None else {"type": "object"}
    return {"description": description, "content": {"application/json": {"schema": content}}}


def openapi(domain: str, version: str = "1") -> dict:
    """The OpenAPI 3.1 document of the control API (the per-episode MCP endpoint is MCP, not in it)."""
    models = [CreateEpisode, RewardRequest, Error, EpisodeInfo, CreatedEpisode, EpisodeList, Closed, Health, TaskList,
              DomainList]
    components: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(schema.pop("$defs", {}))
        components[model.__name__] = schema
    episode_id = {"name": "episode_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": ID_PATTERN}}
    not_found = _answer("no such episode", Error)
    domain_query = {"name": "domain", "in": "query", "required": False, "schema": {"type": "string"},
              "description": "a served domain; optional when one is served"}
    which_domain = {"400": _answer("several domains are served and none was named", Error),
                    "404": _answer("no such domain served", Error)}
    state = {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "object"}}}

    def episode_get(summary: str, ok: dict, **extra: dict) -> dict:
        return {"get": {"summary": summary, "parameters": [episode_id],
                        "responses": {"200": ok, "404": not_found, **extra}}}

    paths = {
        "/health": {"get": {"summary": "Whether every episode is being served", "responses": {"200": _answer("health", Health)}}},
        "/domains": {"get": {"summary": "The served domains", "responses": {"200": _answer("domains", DomainList)}}},
        "/tools": {"get": {"summary": "A domain's verified tools as OpenAI function schemas", "parameters": [domain_query],
                           "responses": {"200": _answer("tools", schema={"type": "array", "items": {"type": "object"}}),
                                         **which_domain}}},
        "/tasks": {"get": {"summary": "A domain's task ids", "parameters": [domain_query],
                           "responses": {"200": _answer("task ids", TaskList), **which_domain}}},
        "/episodes": {
            "post": {"summary": "Start an episode",
                     "requestBody": {"required": False, "content": {"application/json": {"schema": _ref(CreateEpisode)}}},
                     "responses": {"201": _answer("the new episode", CreatedEpisode), "400": _answer("bad body", Error),
                                   "404": _answer("no such task or domain", Error), "409": _answer("id taken", Error),
                                   "429": _answer("too many open episodes", Error)}},
            "get": {"summary": "The open episodes", "responses": {"200": _answer("episodes", EpisodeList)}},
        },
        "/episodes/{episode_id}": {
            **episode_get("An episode's id, task, calls used and limits", _answer("the episode", EpisodeInfo)),
            "delete": {"summary": "Close an episode", "parameters": [episode_id],
                       "responses": {"200": _answer("closed", Closed), "404": not_found}},
        },
        "/episodes/{episode_id}/state": episode_get("The episode's database state", _answer("state", schema=state)),
        "/episodes/{episode_id}/task": episode_get("The episode's task", _answer("task")),
        "/episodes/{episode_id}/reward": {
            **episode_get("The state-diff reward", _answer("reward"), **{"409": _answer("reward unavailable", Error)}),
            "post": {"summary": "The reward, with the agent's final message (an answer task's facts are read from it)",
                     "parameters": [episode_id],
                     "requestBody": {"required": False, "content": {"application/json": {"schema": _ref(RewardRequest)}}},
                     "responses": {"200": _answer("reward"), "400": _answer("bad body", Error), "404": not_found,
                                   "409": _answer("reward unavailable", Error)}}},
        "/episodes/{episode_id}/reset": {"post": {"summary": "Back to the initial state, call budget renewed",
                                                  "parameters": [episode_id],
                                                  "responses": {"200": _answer("the episode", EpisodeInfo), "404": not_found}}},
    }
    for operations in paths.values():  # every control route needs the operator's token
        for operation in operations.values():
            operation["responses"]["401"] = _answer("no token, or a wrong one", Error)
    return {"openapi": "3.1.0",
            "info": {"title": f"worldsmith {domain} episodes", "version": version,
                     "description": "Control API for episodes, for the trainer: every route needs the operator's "
                                    "token (Authorization: Bearer). Each episode's MCP endpoint, POST "
                                    "/episodes/{id}/mcp, is the agent's and needs none."},
            "paths": paths, "security": [{"bearer": []}],
            "components": {"schemas": components, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}}
