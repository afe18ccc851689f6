"""The simulated user over HTTP, beside a served domain's control API: what trainers talk to.

    POST /episodes/{id}/user   body {"message": "<the agent's message to the user>"}
                               -> {"message": "<the user's reply>", "stop": bool, "turns": n}
    GET  /tasks/modes          {"modes": {task id: "single_turn" | "conversational" | null}}: whether
                               a task needs the user's answers (tasks/mode.py); null: not checked

An episode's conversation opens with its task's instruction (the user's request, as exported
rows and the OpenEnv adapter show it to the agent); each call adds the agent's message and the
simulated user's reply (rollouts.user: the task's user profile as persona, the instruction as
its goal, ###STOP### when it is met). After the stop the route answers 409. The reply is the
user's words only: no reward, no answer, no state. `python -m rollouts.serve` serves it.

Who plays the user (`user_for`): a model through the gateway (USER_MODEL, litellm), scripted
answers (step key user/<task>@0/<turn> -> {"message"}), a recorded transcript replayed by those
keys, or, with none, a user that ends the conversation at the agent's first message to it (the
single-turn episode of old).
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from llm import LLM, ScriptedBackend, Transcript, backend_for
from mcp_servers.api_models import parse_body
from mcp_servers.runtime import Environment, EpisodeError
from rollouts.sessions import Scenario
from rollouts.trajectory import STOP
from rollouts.user import InstructionUser, LLMUser, User


class UserMessage(BaseModel):
    """POST /episodes/{id}/user."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(max_length=100_000, description="the agent's message to the user")


def user_for(env: Environment, model: str | None = None, answers: Path | None = None,
             transcript: Path | None = None, record: Path | None = None) -> User:
    """The server's simulated user: scripted `answers` (a JSON file), a recorded `transcript`
    replayed, a `model` (its exchanges recorded to `record`, else kept in memory only), or none
    of them: the user that stops at the agent's first message."""
    if answers is not None:
        llm = LLM(ScriptedBackend(json.loads(Path(answers).read_text())), Transcript(Path(os.devnull)))
    elif transcript is not None:
        llm = LLM(None, Transcript(Path(transcript)))
    elif model:
        llm = LLM(backend_for(model), Transcript(Path(record or os.devnull)))
    else:
        return InstructionUser()
    return LLMUser(llm, env.name, fixed_trial=0)


class Conversations:
    """Each open episode's conversation with the simulated user, as the user hears it."""

    def __init__(self, env: Environment, user: User):
        self.env, self.user = env, user
        # keyed by the episode itself: a closed episode's conversation goes with it, and a new
        # episode under a reused id starts afresh
        self._heard: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._locks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def reply(self, episode_id: str, message: str) -> dict:
        episode = self.env.get_episode(episode_id)  # EpisodeError: no such episode
        if episode.task is None:
            raise LookupError(f"episode {episode_id!r} was not started from a task: it has no user")
        lock = self._locks.setdefault(episode, asyncio.Lock())
        async with lock:
            task = episode.task
            heard = self._heard.setdefault(episode, [{"role": "user", "content": task.instruction}])
            if STOP in heard[-1]["content"]:
                raise PermissionError("the user has ended the conversation")
            heard.append({"role": "agent", "content": message})
            text, _usage = await self.user.reply(Scenario(task.id, task.instruction, task.user_profile), 0,
                                                 list(heard))
            heard.append({"role": "user", "content": text})
            return {"message": text, "stop": STOP in text, "turns": sum(1 for m in heard if m["role"] == "agent")}


def user_routes(env: Environment, user: User) -> list[Route]:
    conversations = Conversations(env, user)

    async def talk(request: Request) -> JSONResponse:
        body = parse_body(UserMessage, await request.body())
        if isinstance(body, str):
            return JSONResponse({"error": body}, status_code=400)
        try:
            return JSONResponse(await conversations.reply(request.path_params["episode_id"], body.message))
        except (EpisodeError, LookupError) as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        except PermissionError as error:
            return JSONResponse({"error": str(error)}, status_code=409)
        except Exception as error:  # the user model failed: say so, the episode stays as it was
            return JSONResponse({"error": f"the simulated user failed: {type(error).__name__}: {error}"},
                                status_code=502)

    async def modes(_request: Request) -> JSONResponse:
        return JSONResponse({"modes": {task: env.task(task).mode for task in env.task_ids()}})

    return [Route("/episodes/{episode_id}/user", talk, methods=["POST"]),
            Route("/tasks/modes", modes, methods=["GET"])]
