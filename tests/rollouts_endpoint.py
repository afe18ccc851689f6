"""A local OpenAI-compatible endpoint answering from recorded answers, keyed by the prompt.

POST /v1/chat/completions looks the request's messages up (agents.llm.prompt_hash) and answers
with the recorded text, as a real model would have; an unknown prompt gets a 404, which litellm
raises as an error.
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agents.llm import count_tokens, prompt_hash


class RecordedEndpoint:
    def __init__(self, answers: dict[str, str]):
        self.answers = answers  # prompt hash -> answer text
        self.requests: list[dict] = []
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        app = Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        messages = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
        text = self.answers.get(prompt_hash(messages))
        if text is None:
            return JSONResponse({"error": {"message": "no recorded answer for this prompt", "type": "not_found"}},
                                status_code=404)
        prompt = sum(count_tokens(m["content"]) for m in messages)
        completion = count_tokens(text)
        return JSONResponse({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "recorded"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })

    def __enter__(self) -> RecordedEndpoint:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *_exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
