"""Many episodes over HTTP: a control API for the trainer and one MCP endpoint per episode.

Two channels share one address. An episode's MCP URL (POST /episodes/{id}/mcp) is the agent's:
it serves the episode's tools and instructions and nothing else (mcp_servers/server.py), with
no credential. Every other route is the trainer's control API and needs the operator's bearer
token, `Authorization: Bearer <token>`, compared in constant time; without it (or with a wrong
one) every route, known or not, answers 401 {"error"}. The MCP URL ignores the token: holding
it reaches no task, reward or state there. The token is given by `--token` or the
WORLDSMITH_CONTROL_TOKEN environment variable, else generated at start and printed to stderr.

    GET    /openapi.json              the OpenAPI document of this API (models: mcp_servers/api_models.py)
    GET    /health                    {"ok", "domain", "domains", "episodes", "tools", "restoring", "restarts"}
    GET    /domains                   {"domains": [{"name", "tools", "tasks"}]}
    GET    /tools?domain=             the domain's verified tools as OpenAI function schemas
    GET    /tasks?domain=             {"tasks": [task ids]}
    POST   /episodes                  body {"domain"?, "task_id"?, "episode_id"?} -> 201 {"episode_id", "task_id", "mcp_url",
                                      "instruction", "user_profile", ...}; no task_id: the server's --task,
                                      else the sample state
    GET    /episodes                  {"episodes": [info, ...]}
    GET    /episodes/{id}             info: task id, calls used, call limit, call timeout
    GET    /episodes/{id}/state       the full database state
    GET    /episodes/{id}/task        the task: instruction, user profile, reference solution, reward spec
    GET    /episodes/{id}/reward      the state-diff reward (409 with {"error"} when unavailable)
    POST   /episodes/{id}/reward      body {"final_message"}: the reward, an answer task's facts read from the message
    POST   /episodes/{id}/reset       back to the initial state, call budget renewed
    DELETE /episodes/{id}             close the episode
    POST   /episodes/{id}/mcp         the episode's MCP endpoint (streamable HTTP, stateless, JSON; no token)

One server may serve several domains (a Universe): `domain` names one, and may be left out
when only one is served (several and none named: 400; one not served: 404 naming the served
ones). Each domain has its own MCP server, which answers its episodes' MCP URLs.

Bodies are validated against the published models; errors are JSON {"error": message} with
400 (bad request), 401 (no or wrong token), 404 (no such episode or task),
409 (reward unavailable, duplicate id) or 429 (too many open episodes). The MCP endpoint is
stateless, so a client that opens a new MCP session for every call stays in its episode: the
episode is named by the URL, not by the MCP session. Episodes nobody used for the server's
--idle-timeout (an hour by default) are closed when new ones are created.
"""

from __future__ import annotations

import contextlib
import hmac
import re

import anyio
from fastmcp.server.dependencies import get_http_request
from fastmcp.server.http import create_streamable_http_app
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_servers.api_models import CreateEpisode, RewardRequest, openapi, parse_body
from mcp_servers.control_token import TOKEN_ENV, check_token
from mcp_servers.runtime import Environment, Episode, EpisodeError, RewardUnavailable, UnknownTask
from mcp_servers.server import build_server
from mcp_servers.universe import Universe, UnknownDomain

MCP_PATH = "/episodes/{episode_id}/mcp"
_MCP_URL = re.compile(r"/episodes/([^/]+)/mcp/?")  # fullmatch only


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class ApiError(Exception):
    """A control request the API refuses: its status and message become the JSON answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# What each refusal of the runtime answers over HTTP (an ApiError carries its own status).
_STATUS = {EpisodeError: 404, UnknownTask: 404, UnknownDomain: 404, RewardUnavailable: 409}


async def _refused(_request: Request, error: Exception) -> JSONResponse:
    """The one exception handler: a refused control request becomes a JSON {"error"} answer."""
    if isinstance(error, ApiError):
        return _error(error.status, error.message)
    return _error(next(status for kind, status in _STATUS.items() if isinstance(error, kind)), str(error))


class _ControlAuth:
    """Every path but an episode's MCP URL needs `Authorization: Bearer <token>`: else 401."""

    def __init__(self, app, token: str):
        self.app, self.token = app, token.encode()

    def _authorized(self, scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)
        return False

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and not _MCP_URL.fullmatch(scope["path"]) and not self._authorized(scope):
            answer = _error(401, "the control API needs the operator's token: send 'Authorization: Bearer "
                                 f"<token>' (the server's --token or {TOKEN_ENV}, or the token it printed at start)")
            answer.headers["www-authenticate"] = "Bearer"
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _KnownEpisodes:
    """Answers 404 at an unknown episode's MCP URL, before the MCP layer sees the request."""

    def __init__(self, app, env: Environment | Universe):
        self.app, self.env = app, env

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            match = _MCP_URL.fullmatch(scope["path"])
            if match:
                try:
                    self.env.get_episode(match.group(1))
                except EpisodeError as error:
                    await _error(404, str(error))(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def create_app(served: Environment | Universe, default_task: str | None = None, *, token: str,
               expose_trainer_resources: bool = False, extra_routes: list[Route] = ()):
    """The ASGI app over one domain (an Environment) or several (a Universe). `token` guards the
    control API (at least 16 characters) and every extra route; `default_task` is used by POST
    /episodes without a task_id; `expose_trainer_resources` (trainers and debugging only) serves
    the episode:// resources at every episode's MCP URL, to anyone who reaches it; `extra_routes`
    are served beside the control API (a layer above adds its own, e.g. the simulated user's)."""

    check_token(token)
    universe = served if isinstance(served, Universe) else Universe({served.name: served})

    def episode_of(request: Request) -> Episode:
        return universe.get_episode(request.path_params["episode_id"])  # EpisodeError: 404

    def environment_of(domain: str | None) -> Environment:
        if domain is None and len(universe.names) > 1:
            raise ApiError(400, f"several domains are served ({', '.join(universe.names)}): name one with 'domain'")
        return universe.environment(domain)  # UnknownDomain: 404, naming the served ones

    document = openapi(universe.name)

    async def openapi_document(_request: Request) -> JSONResponse:
        return JSONResponse(document)

    async def health(_request: Request) -> JSONResponse:
        tools = sum(len(env.tools) for env in universe.environments.values())
        return JSONResponse({"domain": universe.name, "domains": universe.names,
                             "episodes": len(universe.episodes()), "tools": tools, **universe.health()})

    async def served_domains(_request: Request) -> JSONResponse:
        return JSONResponse({"domains": [{"name": name, "tools": len(env.tools), "tasks": len(env.task_ids())}
                                         for name, env in universe.environments.items()]})

    async def tools(request: Request) -> JSONResponse:
        return JSONResponse(environment_of(request.query_params.get("domain")).openai_tools())

    async def tasks(request: Request) -> JSONResponse:
        return JSONResponse({"tasks": environment_of(request.query_params.get("domain")).task_ids()})

    async def create_episode(request: Request) -> JSONResponse:
        body = parse_body(CreateEpisode, await request.body())
        if isinstance(body, str):
            raise ApiError(400, body)
        env = environment_of(body.domain)
        task_id = body.task_id or default_task
        try:
            episode = await anyio.to_thread.run_sync(
                lambda: universe.create_episode(task_id, body.episode_id, domain=env.name))
        except EpisodeError as error:
            status = 429 if "are open" in str(error) else 409 if "already exists" in str(error) else 400
            raise ApiError(status, str(error)) from None
        url = str(request.url_for("episode_mcp", episode_id=episode.id))
        prompt = {"instruction": episode.task.instruction, "user_profile": episode.task.user_profile} if episode.task else {}
        return JSONResponse({**episode.info(), "mcp_url": url, **prompt}, status_code=201)

    async def list_episodes(_request: Request) -> JSONResponse:
        return JSONResponse({"episodes": [e.info() for e in universe.episodes()]})

    async def episode_info(request: Request) -> JSONResponse:
        return JSONResponse(episode_of(request).info())

    async def episode_state(request: Request) -> JSONResponse:
        return JSONResponse(await anyio.to_thread.run_sync(episode_of(request).state))

    async def episode_task(request: Request) -> JSONResponse:
        episode = episode_of(request)
        if episode.task is None:
            raise ApiError(404, f"episode {episode.id!r} was not started from a task")
        return JSONResponse(episode.task.model_dump(mode="json"))

    async def episode_reward(request: Request) -> JSONResponse:
        episode = episode_of(request)
        message = None
        if request.method == "POST":
            body = parse_body(RewardRequest, await request.body())
            if isinstance(body, str):
                raise ApiError(400, body)
            message = body.final_message
        return JSONResponse(await anyio.to_thread.run_sync(episode.reward, message))

    async def reset_episode(request: Request) -> JSONResponse:
        episode = episode_of(request)
        await anyio.to_thread.run_sync(episode.reset)
        return JSONResponse(episode.info())

    async def close_episode(request: Request) -> JSONResponse:
        episode = episode_of(request)
        await anyio.to_thread.run_sync(episode.close)
        return JSONResponse({"episode_id": episode.id, "closed": True})

    # One MCP app per domain (its own tools and instructions; tool names may repeat across
    # domains); an episode's MCP URL is answered by its domain's.
    def resolve() -> Episode:
        return universe.get_episode(get_http_request().path_params["episode_id"])

    mcp_apps = {name: create_streamable_http_app(build_server(env, resolve, expose_trainer_resources), MCP_PATH,
                                                 json_response=True, stateless_http=True)
                for name, env in universe.environments.items()}

    async def episode_mcp(scope, receive, send) -> None:
        episode = universe.get_episode(scope["path_params"]["episode_id"])  # known: checked by _KnownEpisodes
        await mcp_apps[episode.env.name](scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with contextlib.AsyncExitStack() as stack:
            for mcp_app in mcp_apps.values():
                await stack.enter_async_context(mcp_app.router.lifespan_context(mcp_app))
            yield

    routes = [
        Route("/openapi.json", openapi_document, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/domains", served_domains, methods=["GET"]),
        Route("/tools", tools, methods=["GET"]),
        Route("/tasks", tasks, methods=["GET"]),
        Route("/episodes", create_episode, methods=["POST"]),
        Route("/episodes", list_episodes, methods=["GET"]),
        Route("/episodes/{episode_id}", episode_info, methods=["GET"]),
        Route("/episodes/{episode_id}", close_episode, methods=["DELETE"]),
        Route("/episodes/{episode_id}/state", episode_state, methods=["GET"]),
        Route("/episodes/{episode_id}/task", episode_task, methods=["GET"]),
        Route("/episodes/{episode_id}/reward", episode_reward, methods=["GET", "POST"]),
        Route("/episodes/{episode_id}/reset", reset_episode, methods=["POST"]),
        Route(MCP_PATH, _Asgi(episode_mcp), methods=["POST", "DELETE"], name="episode_mcp"),
        *extra_routes,
    ]
    return Starlette(routes=routes, lifespan=lifespan,
                     middleware=[Middleware(_ControlAuth, token=token), Middleware(_KnownEpisodes, env=universe)],
                     exception_handlers={kind: _refused for kind in (ApiError, *_STATUS)})


class _Asgi:
    """An ASGI callable Starlette's Route serves as an app (it calls plain functions as request handlers)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        await self.app(scope, receive, send)
