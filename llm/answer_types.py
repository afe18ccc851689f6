"""Answer schemas as prompts show them: TypeScript-like types, as TypeChat and BAML show them to
models, in well under half the tokens of the JSON Schema. The provider still gets the JSON Schema
itself (response_format or a forced tool call) wherever it takes one.

    {cases: TestCase[]  // at least 1
     done: boolean}
    TestCase = {name: string  // pattern ^[a-z]...$ ...}
"""

from __future__ import annotations

import json

from pydantic import BaseModel


def schema_text(schema: type[BaseModel]) -> str:
    """The answer's type, then each type it names (`Name = {...}`), one field per line with its
    constraints and description as a comment."""
    root = schema.model_json_schema()
    lines = _render(root, "")
    for name, definition in root.get("$defs", {}).items():
        body = _render(definition, "")
        lines = lines + [f"{name} = {body[0]}"] + body[1:]
    return "\n".join(lines)


def _render(node: dict, indent: str) -> list[str]:
    """`node` as lines; the first continues the line it starts on."""
    fields = node.get("properties")
    if fields is None:
        return [_inline(node)]
    required = set(node.get("required", []))
    lines = ["{"]
    for name, field in fields.items():
        body = _render(field, indent + "  ")
        notes = _notes(field)
        mark = "" if name in required else "?"
        lines.append(f"{indent}  {name}{mark}: {body[0]}")
        lines += body[1:]
        if notes:
            lines[-1] += f"  // {notes}"
    lines.append(f"{indent}}}")
    return lines


def _inline(node: dict) -> str:
    if "$ref" in node:
        return node["$ref"].rsplit("/", 1)[1]
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return " | ".join(json.dumps(v) for v in node["enum"])
    if "anyOf" in node:
        return " | ".join(_inline(option) for option in node["anyOf"])
    kind = node.get("type")
    if kind == "array":
        item = _inline(node.get("items", {}))
        return f"({item})[]" if " | " in item else f"{item}[]"
    if kind == "object":
        value = node.get("additionalProperties")
        if isinstance(value, dict):
            return f"{{[key: string]: {_inline(value)}}}"
        return "object"
    return kind or "any"


def _notes(node: dict) -> str:
    """Constraints the type does not show, then the description."""
    notes = []
    for option in [node] + node.get("anyOf", []):
        if "pattern" in option:
            notes.append(f"pattern {option['pattern']}")
        if "minimum" in option:
            notes.append(f">= {option['minimum']}")
        if "maximum" in option:
            notes.append(f"<= {option['maximum']}")
        if option.get("minItems"):
            notes.append(f"at least {option['minItems']}")
    if node.get("default") not in (None, [], {}, ""):
        notes.append(f"default {json.dumps(node['default'])}")
    if node.get("description") and "properties" not in node:
        notes.append(node["description"])
    return "; ".join(notes)
