"""A local OpenAI-compatible endpoint answering from recorded answers, keyed by the prompt.

POST /v1/chat/completions looks the request's messages up (llm.prompt_hash) and answers
with the recorded text, as a real model would have; an unknown prompt gets a 404, which litellm
raises as an error.
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from llm import count_tokens, prompt_hash
from tests.model_endpoint import LocalServer


class RecordedEndpoint(LocalServer):
    def __init__(self, answers: dict[str, str]):
        self.answers = answers  # prompt hash -> answer text
        self.requests: list[dict] = []
        super().__init__([Route("/v1/chat/completions", self.complete, methods=["POST"])])

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
