"""An OpenAI-compatible endpoint that answers from a recorded transcript, the way real models answer.

Each request to `/v1/chat/completions` is matched to its recorded step: the step by the hash of
its first two messages (system and user: the prompt the turn-0 entry recorded as `prompt_sha`),
the turn by the re-asks after them (`(len(messages) - 2) // 2`). The recorded answer for that
key and turn is served; a turn that was never recorded (a re-ask the injected behaviour caused)
gets the last recorded turn's answer, clean. A prompt the transcript does not know is answered
with a 400 and listed in `unknown`.

The answer comes in the shape the request asked for: a forced tool call's arguments, or the
message content (JSON mode, a JSON schema, plain text). `max_tokens` is honoured: a longer
answer (llm.count_tokens) is cut to that many tokens with finish_reason "length"
(`cap` is the server's own limit on top of it).

`Behaviour`s inject what real models and servers do, each on the steps a `Steps` selects and at
most `times` requests per step (None: every request): prose around the JSON, reasoning whose
opening <think> tag is lost, Markdown fences, the answer as a tool call with empty content,
literal tabs and CRLF inside JSON strings, unknown extra fields, Markdown prose instead of JSON,
a misspelt foreign key, a long reasoning preamble (for the output cap), an HTTP status (500,
429, 401...), a stall longer than the client's timeout, and a 400 to any response_format (as
LM Studio answers JSON mode). Content changes apply to recorded answers that are JSON; an
answer recorded as malformed is served as recorded.

Requests are counted per step, per step and turn, and per hash of the whole prompt (what a
run's own transcript records as `prompt_sha`), under a lock; `log` keeps one line per request.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from llm import compact_json, count_tokens, prompt_hash
from tests.support.model_endpoint import LocalServer, _forced_tool, asked

JOB_SEEKING = Path(__file__).resolve().parents[2] / "domains" / "job_seeking" / "transcript.jsonl"


@dataclass(frozen=True)
class Steps:
    """The steps a behaviour applies to: keys starting with one of `prefixes` ("" is every step);
    with `first`, only the first N such steps in the order they are first requested."""

    prefixes: tuple[str, ...] = ("",)
    first: int | None = None


ALL = Steps()


@dataclass
class Behaviour:
    """What the endpoint does instead of answering clean (see the module's docstring for `kind`s).
    `value`: the status for "status", seconds for "stall", tokens for "ramble"."""

    kind: str
    steps: Steps = ALL
    times: int | None = None
    value: float | None = None
    _chosen: list[str] = field(default_factory=list, repr=False)
    _used: Counter = field(default_factory=Counter, repr=False)

    def applies(self, step: str) -> bool:
        """Whether it acts on this request of `step`; counts the use (call under the endpoint's lock)."""
        if not any(step.startswith(p) for p in self.steps.prefixes):
            return False
        if self.steps.first is not None and step not in self._chosen:
            if len(self._chosen) >= self.steps.first:
                return False
            self._chosen.append(step)
        if self.times is not None and self._used[step] >= self.times:
            return False
        self._used[step] += 1
        return True


CONTENT_KINDS = ("prose", "think", "fence", "control", "extra_fields", "markdown", "misspelt_fk", "ramble")
KINDS = CONTENT_KINDS + ("tool_call", "status", "stall", "refuse_response_format")

REFUSED_FORMAT = ("Invalid parameter: 'response_format' is not supported by this server: "
                  "'response_format.type' must be 'json_schema' or 'text'")  # as LM Studio words it


# -- what real models do to an answer -------------------------------------------------------

def prose(text: str) -> str:
    return f"Here is the answer, as one JSON object:\n\n{text}\n\nLet me know if anything should change."


def think(text: str) -> str:
    return ("The user wants the answer as JSON. I will check the names against the schema first, "
            "then write the object.\n</think>\n\n" + text)


def fence(text: str) -> str:
    return f"```json\n{text}\n```"


def _tabs(code: str) -> str:
    """Each leading four spaces a tab (as a model that indents with tabs writes the code)."""
    lines = []
    for line in code.split("\n"):
        stripped = line.lstrip(" ")
        depth = len(line) - len(stripped)
        lines.append("\t" * (depth // 4) + " " * (depth % 4) + stripped)
    return "\n".join(lines)


def _raw_string(value: str) -> str:
    """A JSON string literal with literal tabs and CRLF line ends inside it (not escaped)."""
    out = []
    for c in value:
        out.append("\r\n" if c == "\n" else "\t" if c == "\t" else json.dumps(c)[1:-1])
    return '"' + "".join(out) + '"'


def control(text: str) -> str:
    """Code strings written with literal tab indentation and literal CRLF line ends inside the JSON
    string; a CRLF and a tab between the object's first tokens. No longer in tokens than the answer."""
    data = json.loads(text)
    raw: dict[str, str] = {}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "code" and isinstance(value, str):
                    mark = f"@@code{len(raw)}@@"
                    raw[mark] = _raw_string(_tabs(value))
                    node[key] = mark
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    out = "{\r\n\t" + compact_json(data)[1:-1] + "\r\n}"  # compact, as recorded: only the change added
    for mark, literal in raw.items():
        out = out.replace(json.dumps(mark), literal)
    return out


def extra_fields(text: str) -> str:
    """Fields the schema does not have: on the object and on each object in its lists."""
    data = json.loads(text)
    for value in data.values():
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    item["confidence"] = "high"
    data["notes"] = "All fields follow the schema."
    return compact_json(data)


def markdown(_text: str) -> str:
    return ("## Answer\n\nI have worked through the request. The answer covers what was asked:\n\n"
            "- every name follows the conventions given\n- the required fields are all present\n\n"
            "Tell me if you want it in another format.")


def misspelt_fk(text: str) -> str:
    """The first foreign key's table misspelt (a letter dropped)."""
    data = json.loads(text)
    for table in data.get("tables", []):
        for column in table.get("columns", []):
            if column.get("foreign_key"):
                target, _, col = column["foreign_key"].partition(".")
                column["foreign_key"] = f"{target[:2]}{target[3:]}.{col}"
                return compact_json(data)
    raise ValueError("no foreign key to misspell")


def ramble(text: str, tokens: int) -> str:
    """A reasoning preamble of about `tokens` tokens before the answer."""
    sentence = "Let me reconsider each field of the answer against the schema once more. "
    per = count_tokens(sentence)
    return "<think>\n" + sentence * (tokens // per + 1) + "\n</think>\n\n" + text


MUTATE = {"prose": prose, "think": think, "fence": fence, "control": control, "extra_fields": extra_fields,
          "markdown": markdown, "misspelt_fk": misspelt_fk}


def cut(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` tokens (by count_tokens)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _normalised(messages: list[dict]) -> list[dict]:
    """The messages as the recorded prompt would have been before tabs and CRLF came back in code."""
    return [{**m, "content": m["content"].replace("\r\n", "\n").replace("\t", "    ")}
            if isinstance(m.get("content"), str) else m for m in messages]


class TranscriptEndpoint(LocalServer):
    def __init__(self, behaviours: list[Behaviour] | tuple = (), transcript: Path = JOB_SEEKING,
                 cap: int | None = None):
        for b in behaviours:
            if b.kind not in KINDS:
                raise ValueError(f"unknown behaviour {b.kind!r}")
        self.behaviours = list(behaviours)
        self.cap = cap
        self.entries: dict[str, dict] = {}
        self.steps: dict[str, str] = {}  # turn-0 prompt hash -> step key
        for line in transcript.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                self.entries[entry["key"]] = entry
                if entry["turn"] == 0:
                    if entry["prompt_sha"] in self.steps:
                        raise ValueError(f"two steps share a prompt: {entry['key']}")
                    self.steps[entry["prompt_sha"]] = entry["key"]
        self.lock = threading.Lock()
        self.by_step: Counter = Counter()  # step key -> requests
        self.by_turn: Counter = Counter()  # "key#turn" -> requests
        self.by_prompt: Counter = Counter()  # prompt_hash(all messages) -> requests
        self.log: list[dict] = []  # per request: step, turn, way, status, changes, stall, reask, finish_reason, tokens
        self.unknown: list[str] = []  # prompts the transcript does not know (first user line)
        self.normalised = 0  # requests matched only after undoing tabs and CRLF in their prompt
        self.on_request = None  # a callable(endpoint) after each answered request, for tests
        super().__init__([Route("/v1/chat/completions", self.complete, methods=["POST"])])

    # -- counting -------------------------------------------------------------------------
    def answered(self) -> int:
        """Requests answered with a recorded answer (HTTP 200)."""
        with self.lock:
            return sum(1 for r in self.log if r["status"] == 200)

    def snapshot(self) -> Counter:
        with self.lock:
            return Counter(self.by_prompt)

    # -- answering ------------------------------------------------------------------------
    def _step(self, messages: list[dict]) -> str | None:
        step = self.steps.get(prompt_hash(messages[:2]))
        if step is None:
            step = self.steps.get(prompt_hash(_normalised(messages[:2])))
            if step is not None:
                self.normalised += 1
        return step

    def _recorded(self, step: str, turn: int) -> tuple[str, bool]:
        """The answer for this turn and whether it was recorded for it (else: the last recorded turn's)."""
        last = self.entries[step]["response"]
        for n in range(1, turn + 1):
            entry = self.entries.get(f"{step}#{n}")
            if entry is None:
                return last, False
            last = entry["response"]
        return last, True

    def _plan(self, body: dict) -> dict:
        """What to answer to this request, decided under the lock."""
        messages = body.get("messages") or []
        turn = max(0, (len(messages) - 2) // 2)
        with self.lock:
            self.by_prompt[prompt_hash(messages)] += 1
            step = self._step(messages)
            plan = {"step": step, "turn": turn, "way": asked(body), "status": 200}
            if turn:  # what the re-ask said was wrong
                plan["reask"] = str(messages[-1].get("content") or "")[:500]
            if step is None:
                user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
                self.unknown.append(str(user).splitlines()[0][:200] if user else "")
                plan.update(status=400, message="no recorded step has this prompt")
                self.log.append(plan)
                return plan
            self.by_step[step] += 1
            self.by_turn[f"{step}#{turn}"] += 1
            text, recorded = self._recorded(step, turn)
            try:
                json.loads(text)
                is_json = True
            except ValueError:
                is_json = False
            changes: list[tuple[str, float | None]] = []
            for b in self.behaviours:
                if b.kind == "refuse_response_format":
                    if "response_format" in body:
                        plan.update(status=400, message=REFUSED_FORMAT)
                        break
                    continue
                if b.kind in CONTENT_KINDS and not (recorded and is_json):
                    continue
                if not b.applies(step):
                    continue
                if b.kind == "status":
                    plan.update(status=int(b.value), message=f"injected HTTP {int(b.value)}")
                    break
                if b.kind == "stall":
                    plan["stall"] = float(b.value)
                elif b.kind == "tool_call":
                    plan["tool_call"] = True
                else:
                    changes.append((b.kind, b.value))
            if plan["status"] == 200:
                for kind, value in changes:
                    text = ramble(text, int(value)) if kind == "ramble" else MUTATE[kind](text)
                plan["changes"] = [k for k, _ in changes]
                plan["text"] = text
            self.log.append(plan)
            return plan

    async def complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        plan = await asyncio.to_thread(self._plan, body)  # token counts and mutations off the event loop
        if plan["status"] != 200:
            kind = "invalid_request_error" if plan["status"] < 500 else "server_error"
            return JSONResponse({"error": {"message": plan["message"], "type": kind,
                                           "code": "invalid_api_key" if plan["status"] == 401 else None}},
                                status_code=plan["status"])
        if plan.get("stall"):  # the client gives up first; what is sent after is never read
            await asyncio.sleep(plan["stall"])
        text = plan.pop("text")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if self.cap is not None:
            limit = min(limit or self.cap, self.cap)
        finish = "stop"
        tokens = await asyncio.to_thread(count_tokens, text)
        if limit is not None and tokens > limit:
            text = await asyncio.to_thread(cut, text, int(limit))
            tokens, finish = await asyncio.to_thread(count_tokens, text), "length"
        with self.lock:
            plan.update(finish_reason=finish, completion_tokens=tokens)
        tool = _forced_tool(body)
        if tool or plan.get("tool_call"):
            message = {"role": "assistant", "content": None if tool else "", "tool_calls": [{
                "id": "call_1", "type": "function", "function": {"name": tool or "answer", "arguments": text}}]}
            if finish == "stop":
                finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": text}
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or []) // 4  # an estimate
        if self.on_request is not None:
            self.on_request(self)
        return JSONResponse({
            "id": f"chatcmpl-{len(self.log)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "recorded"),
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens},
        })

    def __enter__(self) -> TranscriptEndpoint:
        count_tokens("warm")  # litellm's import and tokenizer load, before the first request's clock runs
        return super().__enter__()


def served_ways(endpoint: TranscriptEndpoint) -> list[str]:
    """How each request asked for the answer's shape, in order (json_schema, tool, json or text)."""
    with endpoint.lock:
        return [r["way"] for r in endpoint.log]


