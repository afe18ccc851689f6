"""A small client of worldsmith's HTTP control API and per-episode MCP endpoints.

The control API is the trainer's channel: every request carries the server's control token,
`Authorization: Bearer <token>`, given to `Control(url, token=...)` or read from the
WORLDSMITH_CONTROL_TOKEN environment variable (the one `python -m mcp_servers` reads too). The
episode's MCP endpoint is the agent's channel and gets no token. The MCP endpoints are
stateless and answer JSON, so one JSON-RPC `tools/call` POST is a whole call: no session to
open, and any process may call into any episode it knows the id of.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import httpx

TOKEN_ENV = "WORLDSMITH_CONTROL_TOKEN"  # the core's mcp_servers.control_token.TOKEN_ENV (adapters import no core)

END_TOOL = "end_episode"
END_TOOL_SCHEMA = {
    "name": END_TOOL,
    "description": "End the episode. Call it once the user's request is complete (or cannot be "
                   "completed); the episode is scored on the state it leaves and, when the user asked for "
                   "information, on the answer given as `message`.",
    "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}, "additionalProperties": False},
}


class ControlError(RuntimeError):
    """The worldsmith server refused a request; the message is its own."""


class Control:
    """Episodes of one worldsmith server (`base_url`, e.g. http://127.0.0.1:8000); `token`: its
    control token, default $WORLDSMITH_CONTROL_TOKEN."""

    def __init__(self, base_url: str, timeout: float = 60.0, token: str | None = None):
        self.base_url = base_url.rstrip("/")
        self._ids = itertools.count(1)
        token = token or os.environ.get(TOKEN_ENV)
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout,
                                 headers={"authorization": f"Bearer {token}"} if token else None)

    def close(self) -> None:
        self.http.close()

    def _json(self, response: httpx.Response) -> Any:
        if response.status_code >= 400:
            try:
                message = response.json().get("error", response.text)
            except ValueError:
                message = response.text
            raise ControlError(f"{response.request.method} {response.request.url.path}: "
                               f"{response.status_code} {message}")
        return response.json()

    @staticmethod
    def _which(domain: str | None) -> dict:
        """The query naming a domain, for a server that serves several (none: the only one)."""
        return {"domain": domain} if domain else {}

    def tasks(self, domain: str | None = None) -> list[str]:
        return self._json(self.http.get("/tasks", params=self._which(domain)))["tasks"]

    def tools(self, domain: str | None = None) -> list[dict]:
        """The domain's tools as MCP tool specs (name, description, input_schema)."""
        return [{"name": f["function"]["name"], "description": f["function"].get("description", ""),
                 "input_schema": f["function"].get("parameters", {"type": "object", "properties": {}})}
                for f in self._json(self.http.get("/tools", params=self._which(domain)))]

    def open(self, task_id: str | None, episode_id: str | None = None, domain: str | None = None) -> dict:
        """A new episode (of `domain`, where the server serves several); with `episode_id` of one
        already open, that one (idempotent, as verl needs)."""
        body = {k: v for k, v in (("domain", domain), ("task_id", task_id), ("episode_id", episode_id)) if v is not None}
        response = self.http.post("/episodes", json=body)
        if response.status_code == 409 and episode_id is not None:
            return self.info(episode_id)
        return self._json(response)

    def info(self, episode_id: str) -> dict:
        return self._json(self.http.get(f"/episodes/{episode_id}"))

    def call(self, episode_id: str, tool: str, arguments: dict) -> tuple[str, bool]:
        """One tool call in the episode: (result text, is_error). Tool errors are results."""
        request = self.http.build_request(
            "POST", f"/episodes/{episode_id}/mcp",
            json={"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call",
                  "params": {"name": tool, "arguments": arguments}},
            headers={"accept": "application/json, text/event-stream"})
        request.headers.pop("authorization", None)  # the agent's channel: the token stays on the control API
        response = self.http.send(request)
        reply = self._json(response)
        if "error" in reply:
            return f"Error: {reply['error'].get('message', reply['error'])}", True
        result = reply["result"]
        text = "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        return text, bool(result.get("isError"))

    def reward(self, episode_id: str, final_message: str | None = None) -> dict:
        """The episode's reward; `final_message`: the agent's last message to the user, which an
        answer task's facts are read from."""
        if final_message is None:
            return self._json(self.http.get(f"/episodes/{episode_id}/reward"))
        return self._json(self.http.post(f"/episodes/{episode_id}/reward", json={"final_message": final_message}))

    def delete(self, episode_id: str) -> None:
        self.http.delete(f"/episodes/{episode_id}")
