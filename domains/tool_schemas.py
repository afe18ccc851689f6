"""What the agent sees of a tool, and the check its arguments pass before any code runs.

From a ToolSchema: the JSON Schema of its parameters (types, per-parameter descriptions,
enums, defaults), the OpenAI function form of it, MCP annotations (read-only, destructive),
and a strict validator. Validation happens in the server process, so a missing, unknown,
mistyped or oversized argument is refused with a clear message and never reaches the sandbox.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, StringConstraints, TypeAdapter, ValidationError
from typing_extensions import NotRequired, TypedDict

from domains.spec import Param, ToolSchema

_JSON_FORMATS = {"YYYY-MM-DD": "date", "email": "email"}
_TYPE_WORDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean (true or false)",
               "array": "an array", "object": "an object"}
_JSON_NAMES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean", "list": "an array",
               "dict": "an object", "NoneType": "null"}


class ArgumentError(ValueError):
    """Arguments a tool cannot be called with; the message is meant for the agent."""


def parameter_schema(param: Param) -> dict:
    prop: dict[str, Any] = {"type": param.type}
    description = param.description
    if param.format and param.format not in description:
        description = f"{description.rstrip('. ')}. Format: {param.format}."
    prop["description"] = description
    if param.format in _JSON_FORMATS:
        prop["format"] = _JSON_FORMATS[param.format]
    if param.type == "array":
        prop["items"] = {"type": param.items}
    if param.enum and param.type == "string":
        prop["enum"] = list(param.enum)
    if param.default is not None:
        prop["default"] = param.default
    return prop


def input_schema(tool: ToolSchema) -> dict:
    return {
        "type": "object",
        "properties": {p.name: parameter_schema(p) for p in tool.parameters},
        "required": [p.name for p in tool.parameters if p.required],
        "additionalProperties": False,
    }


def openai_function(tool: ToolSchema, description: str | None = None) -> dict:
    """The OpenAI function form; `description` replaces the schema's (the served one ends with the
    tool's preconditions: DomainSpec.requirements, domains.policy.described)."""
    return {"type": "function", "function": {"name": tool.name, "description": description or tool.description,
                                             "parameters": input_schema(tool)}}


def overwrites(tests: list[dict]) -> bool:
    """Whether a tool's procedural tests show it updating or deleting rows (MCP's "destructive")."""
    return any(change.get("updated") or change.get("deleted")
               for test in tests if test.get("kind") == "success"
               for change in (test.get("expect_changes") or {}).values())


def annotations(tool: ToolSchema, overwrites_rows: bool = False) -> dict:
    """MCP tool annotations (ToolAnnotations fields); a closed database, so never open-world.

    The MCP spec calls a tool destructive unless its updates are only additive: the schema's own
    flag, or its verified tests showing an update or a delete, make it so."""
    return {
        "title": tool.name.replace("_", " ").capitalize(),
        "read_only_hint": not tool.mutates,
        "destructive_hint": bool(tool.mutates and (tool.destructive or overwrites_rows)),
        "idempotent_hint": not tool.mutates,
        "open_world_hint": False,
    }


def _python_type(param: Param, max_chars: int) -> Any:
    text = Annotated[str, StringConstraints(max_length=max_chars)]
    scalar = {"string": text, "integer": int, "number": float, "boolean": bool, "object": dict[str, Any]}
    if param.type == "string" and param.enum:
        return Literal[tuple(param.enum)]
    if param.type == "array":
        return list[scalar.get(param.items, list[Any])]
    return scalar[param.type]


class ArgumentValidator:
    """Strict validation of one tool's arguments: no coercion of "3" into 3 or 1 into True."""

    def __init__(self, tool: ToolSchema, max_string_chars: int = 32_768, max_argument_bytes: int = 262_144):
        self.tool = tool
        self.max_string_chars, self.max_argument_bytes = max_string_chars, max_argument_bytes
        self.params = {p.name: p for p in tool.parameters}
        fields = {}
        for p in tool.parameters:
            kind = _python_type(p, max_string_chars)
            fields[p.name] = kind if p.required else NotRequired[kind | None]
        shape = TypedDict(f"{tool.name}_arguments", fields)  # a functional TypedDict takes any key
        shape.__pydantic_config__ = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
        self._adapter = TypeAdapter(shape)

    def validate(self, arguments: object) -> dict:
        """The arguments to pass on; raises ArgumentError.

        Only the arguments given are passed, and a null optional one counts as not given, so
        the tool's own default applies.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ArgumentError(f"{self.tool.name}: arguments must be an object of named arguments, "
                                f"got {_JSON_NAMES.get(type(arguments).__name__, type(arguments).__name__)}")
        try:
            valid = self._adapter.validate_python(arguments)
        except ValidationError as error:
            problems = [self._explain(e) for e in error.errors()]
            raise ArgumentError(f"{self.tool.name}: " + "; ".join(dict.fromkeys(problems))) from None
        size = len(json.dumps(valid))
        if size > self.max_argument_bytes:  # many strings under the limit, or large objects
            raise ArgumentError(f"{self.tool.name}: the arguments are {size:,} bytes of JSON; "
                                f"the limit is {self.max_argument_bytes:,}")
        return {k: v for k, v in valid.items() if v is not None or self.params[k].required}

    def _explain(self, error: dict) -> str:
        loc = error["loc"]
        name = str(loc[0]) if loc else ""
        where = name + "".join(f"[{part}]" for part in loc[1:])
        param = self.params.get(name)
        kind, given = error["type"], error.get("input")
        if kind == "missing":
            return f"missing required argument {name!r} ({param.type}: {param.description})"
        if kind == "extra_forbidden":
            known = ", ".join(self.params) or "none"
            return f"unknown argument {name!r} (arguments: {known})"
        if kind == "string_too_long":
            return f"argument {where!r} is too long: {len(given):,} characters, the limit is {self.max_string_chars:,}"
        if kind == "finite_number":
            return f"argument {where!r} must be a finite number, got {given!r}"
        if kind == "literal_error":
            return f"argument {where!r} must be one of {', '.join(map(repr, param.enum))}; got {given!r}"
        got = _JSON_NAMES.get(type(given).__name__, type(given).__name__)
        if param is not None and len(loc) == 1:
            return f"argument {where!r} must be {_TYPE_WORDS[param.type]}, got {got}"
        if param is not None and param.type == "array":
            return f"argument {where!r} must be {_TYPE_WORDS.get(param.items or '', 'valid')}, got {got}"
        return f"argument {where!r}: {error['msg']}"
