"""What one tool call answers, from its episode process's reply or from why there was none
(mcp_servers.pool): the tool's result, or an error the agent reads, naming what happened to the
call and to the episode's state."""

from __future__ import annotations


def from_reply(reply: dict) -> tuple[object, dict | None, float | None]:
    """(result, None, the tool's own seconds) or (None, {type, message}, None)."""
    if "error" in reply:
        error = reply["error"]
        if not isinstance(error, dict) or not isinstance(error.get("type"), str):
            return None, {"type": "ProtocolError", "message": "the episode process answered nonsense; "
                          "it was replaced and the episode's state is as of its last successful call"}, None
        return None, {"type": error["type"], "message": str(error.get("message") or "")}, None
    spent = reply.get("tool_s")
    return reply.get("result"), None, spent if isinstance(spent, float) else None


def without_reply(why: str, timeout: float, spent: float, lost: bool) -> dict:
    """The error for a call that got no reply: `why` is "busy", "timeout", "died" or the protocol
    violation; `lost`: the episode's files were beyond repair and it restarted from its template."""
    unchanged = "the episode's state is as of its last successful call"
    if lost:
        unchanged = ("the episode's database files were damaged from inside its process, so the episode "
                     "was restarted from its initial state")
    if why == "busy":
        return {"type": "Timeout", "message": f"the episode was busy with another call for the whole "
                                              f"{timeout:g} s timeout; this call did not run"}
    if why == "timeout":
        return {"type": "Timeout", "message": f"the tool did not finish within {timeout:g} s and was "
                                              f"stopped; {unchanged}"}
    if why == "died":
        return {"type": "WorkerCrashed", "message": f"the tool's process died after {spent:.2f} s (out of "
                                                    f"memory, or killed); {unchanged}"}
    return {"type": "ProtocolError", "message": f"the episode process broke the protocol ({why}); it was "
                                                f"replaced and {unchanged}"}
