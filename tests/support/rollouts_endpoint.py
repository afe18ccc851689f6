"""A local OpenAI-compatible endpoint answering from recorded answers, keyed by the request.

POST /v1/chat/completions looks the request up by its messages and, when it sends tools, its
tools (llm.prompt_hash) and answers with the recorded answer, as a real model would have:
text as the message's content, or, for a request with tools, the recorded assistant message with
its tool_calls. An unknown request gets a 404, which litellm raises as an error.
"""

from __future__ import annotations

import json
import time

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from llm import count_tokens, prompt_hash
from tests.support.model_endpoint import LocalServer


class RecordedEndpoint(LocalServer):
    def __init__(self, answers: dict[str, str]):
        self.answers = answers  # request hash -> answer text (an assistant message as JSON, with tools)
        self.requests: list[dict] = []
        super().__init__([Route("/v1/chat/completions", self.complete, methods=["POST"])])

    async def complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        text = self.answers.get(prompt_hash(body["messages"], body.get("tools")))
        if text is None:
            return JSONResponse({"error": {"message": "no recorded answer for this prompt", "type": "not_found"}},
                                status_code=404)
        message = json.loads(text) if "tools" in body else {"role": "assistant", "content": text}
        prompt = sum(count_tokens(m.get("content") or "") for m in body["messages"])
        completion = count_tokens(text)
        return JSONResponse({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "recorded"),
            "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                         "message": message}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })
