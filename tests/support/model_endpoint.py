"""A local OpenAI-compatible endpoint that answers the way real models and providers do.

Each request takes the next scripted reply: an answer (as content, as a tool call's arguments,
as calls of the request's own tools (`tool_calls`: [{"name", "arguments"}]), or cut off with
finish_reason "length") or an HTTP error. A request that forces a tool call
(`tool_choice` naming a function) gets the answer as that call's arguments, as providers do.
A reply can refuse, with the 400 a provider gives, what some models do not take: `refuse` lists
any of "json_schema", "json_object" (response formats) and "tools"; `unless_json_mode` refuses
any response format, as LM Studio refuses JSON mode. Every request body is kept (its
`response_format`, `tools` and `tool_choice` say how the answer's shape was asked for), so tests
count and inspect what the gateway asked. `/v1/messages` answers in Anthropic's Messages format
(point litellm's `anthropic/` models at `root`), with a tool_use block for a forced tool.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def asked(body: dict) -> str:
    """How a request asked for the answer's shape: json_schema, tool, json or text."""
    if "tool_choice" in body:
        return "tool"
    return {"json_schema": "json_schema", "json_object": "json"}.get(body.get("response_format", {}).get("type"), "text")


def _forced_tool(body: dict) -> str | None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name") or choice.get("name")  # OpenAI's or Anthropic's form
    return None


class LocalServer:
    """A Starlette app (of `routes`, or `app` itself) served on a free local port by uvicorn in a
    thread, while in a `with` block."""

    def __init__(self, routes: list[Route] = (), app=None):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.root}/v1"
        app = app or Starlette(routes=list(routes))
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *_exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class ModelEndpoint(LocalServer):
    def __init__(self, replies: list[dict]):
        self.replies = list(replies)
        self.requests: list[dict] = []
        super().__init__([Route("/v1/chat/completions", self.complete, methods=["POST"]),
                          Route("/v1/messages", self.messages, methods=["POST"])])

    def _next(self, body: dict) -> tuple[dict, JSONResponse | None]:
        self.requests.append(body)
        reply = self.replies[0] if len(self.replies) == 1 else self.replies.pop(0)  # the last one repeats
        refused = None
        form = (body.get("response_format") or {}).get("type")
        if reply.get("unless_json_mode") and "response_format" in body:
            refused = "'response_format.type' must be 'json_schema' or 'text'"
        elif form in reply.get("refuse", ()):
            refused = f"Invalid parameter: 'response_format' of type '{form}' is not supported with this model."
        elif "tools" in body and "tools" in reply.get("refuse", ()):
            refused = f"registry.ollama.ai/library/{body.get('model')}:latest does not support tools"
        if refused:
            return reply, JSONResponse({"error": {"message": refused, "type": "invalid_request_error"}},
                                       status_code=400)
        if "status" in reply:
            return reply, JSONResponse({"error": {"message": reply.get("message", "error"), "type": "server_error"}},
                                       status_code=reply["status"])
        return reply, None

    async def complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        reply, error = self._next(body)
        if error:
            return error
        message = {"role": "assistant", "content": reply.get("content", "")}
        tool = _forced_tool(body)
        if "tool_calls" in reply:  # the model's own calls of the request's tools
            message["tool_calls"] = [{"id": f"call_{len(self.requests)}_{i}", "type": "function", "function": {
                "name": call["name"], "arguments": call["arguments"] if isinstance(call["arguments"], str)
                else json.dumps(call["arguments"])}} for i, call in enumerate(reply["tool_calls"])]
        elif "tool_args" in reply or tool:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function", "function": {
                    "name": tool or "answer", "arguments": reply.get("tool_args", reply.get("content", ""))}}]}
        return JSONResponse({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": reply.get("finish_reason", "stop"), "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })

    async def messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        reply, error = self._next(body)
        if error:
            return error
        tool = _forced_tool(body)
        content = ([{"type": "tool_use", "id": "toolu_1", "name": tool, "input": json.loads(reply["content"])}]
                   if tool else [{"type": "text", "text": reply.get("content", "")}])
        return JSONResponse({
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant", "model": body.get("model"),
            "content": content, "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        })
