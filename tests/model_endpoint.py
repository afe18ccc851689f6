"""A local OpenAI-compatible endpoint that answers the way real models and providers do.

Each request takes the next scripted reply: an answer (as content, as a tool call's arguments,
or cut off with finish_reason "length") or an HTTP error; a reply with `unless_json_mode`
answers a 400 to requests that ask for JSON mode, as LM Studio does. Every request is kept,
so tests count what the gateway asked.
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


class ModelEndpoint:
    def __init__(self, replies: list[dict]):
        self.replies = list(replies)
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
        reply = self.replies[0] if len(self.replies) == 1 else self.replies.pop(0)  # the last one repeats
        if reply.get("unless_json_mode") and "response_format" in body:
            return JSONResponse({"error": {"message": "'response_format.type' must be 'json_schema' or 'text'",
                                           "type": "invalid_request_error"}}, status_code=400)
        if "status" in reply:
            return JSONResponse({"error": {"message": reply.get("message", "error"), "type": "server_error"}},
                                status_code=reply["status"])
        message = {"role": "assistant", "content": reply.get("content", "")}
        if "tool_args" in reply:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function", "function": {"name": "answer", "arguments": reply["tool_args"]}}]}
        return JSONResponse({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": reply.get("finish_reason", "stop"), "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })

    def __enter__(self) -> ModelEndpoint:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *_exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
