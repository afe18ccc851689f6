"""A tolerant reader for the JSON object in a model's answer.

Models wrap their JSON: reasoning (`<think>…</think>`, sometimes with the opening tag lost),
a sentence before or after, Markdown fences, literal tabs or newlines inside strings, trailing
commas. What can be recovered is, before any re-ask is spent: the outermost JSON object is cut
out of the text, read with control characters allowed, and repaired with json-repair when it
still does not parse. An answer with no object at all is an error the caller re-asks with.
"""

from __future__ import annotations

import json
import re

import json_repair

_THINK_END = re.compile(r"</think(?:ing)?>", re.I)
_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.S)


def _outermost_object(text: str) -> str | None:
    """The span from the first '{' to its matching '}', aware of strings; None without one."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            c = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif c == "\\":
                    escaped = True
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1]
        start = text.find("{", start + 1)
    return None


def read_json(text: str) -> object:
    """The JSON object a model meant; raises ValueError when the answer holds none."""
    try:
        return json.loads(text)  # the common case, byte for byte as before
    except ValueError:
        pass
    ends = list(_THINK_END.finditer(text))
    if ends:  # reasoning first, with or without its opening tag: the answer follows the last end tag
        text = text[ends[-1].end():]
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    candidate = _outermost_object(text)
    if candidate is None:
        raise ValueError("the answer holds no JSON object: reply with one JSON object")
    try:
        return json.loads(candidate, strict=False)  # literal tabs and newlines inside strings
    except ValueError:
        repaired = json_repair.loads(candidate)
        if not isinstance(repaired, dict):
            raise ValueError("the answer's JSON object could not be read: reply with one valid JSON object") from None
        return repaired
