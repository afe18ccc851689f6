"""What prompts show of the database and of the tools: a line per column or parameter, shorter
than their JSON or their compiled classes (the code and debug prompts name each table's class)."""

from __future__ import annotations

import json

from domains.db_layer import class_name
from domains.spec import DBSchema, OutputField, ToolSchema


def describe_tables(db: DBSchema, names: list[str], classes: bool = False) -> str:
    """Tables a line per column: type, key, nullability, default, references, bounds, allowed values.
    With `classes`, each table is headed by the db module's class that maps it."""
    lines = []
    for name in names:
        table = db.table(name)
        head = f"class {class_name(name)}: table {name}" if classes else name
        lines.append(f"{head} (keys {table.id_prefix}-0001 upward){': ' + table.description if table.description else ''}")
        for c in table.columns:
            facts = [c.type, "primary key" if c.primary_key else "" if c.nullable else "not null",
                     f"default {c.default!r}" if c.default is not None else "", "unique" if c.unique else "",
                     f"references {c.foreign_key}" if c.foreign_key else "",
                     f"at most {c.max_length} chars" if c.max_length else "",
                     f"one of {'|'.join(c.choices)}" if c.choices else "",
                     f">= {c.minimum:g}" if c.minimum is not None else "",
                     f"<= {c.maximum:g}" if c.maximum is not None else ""]
            facts = [f for f in facts if f]
            lines.append(f"  - {c.name}: {', '.join(facts)}{'; ' + c.description if c.description else ''}")
    return "\n".join(lines)


def describe_tool(tool: ToolSchema, preconditions: bool = True) -> str:
    """A tool schema a line per parameter and output field, then its conditions and errors: everything
    its JSON says, in about two thirds of the tokens. Without `preconditions` where the prompt states
    the policy's rules for the tool, which restate them with their errors."""
    kind = ("writes" if tool.mutates else "reads only") + (", destructive" if tool.destructive else "")
    lines = [f"{tool.name} ({kind}): {tool.description}", "Parameters:" if tool.parameters else "Parameters: none"]
    for p in tool.parameters:
        facts = [f"array of {p.items}" if p.type == "array" else p.type, "" if p.required else "optional",
                 f"default {json.dumps(p.default)}" if p.default is not None else "",
                 f"format {p.format}" if p.format else "", f"one of {'|'.join(p.enum)}" if p.enum else ""]
        lines.append(f"  - {p.name}: {', '.join(f for f in facts if f)}{'; ' + p.description if p.description else ''}")
    lines.append("Returns an object:")
    lines += _fields(tool.output, "  ")
    for head, items in (("Preconditions", tool.preconditions if preconditions else []),
                        ("Postconditions", tool.postconditions)):
        if items:
            lines += [f"{head}:"] + [f"  - {item}" for item in items]
    if tool.raises:
        lines += ["Raises:"] + [f"  - {r.error} when {r.when}" for r in tool.raises]
    return "\n".join(lines)


def _fields(fields: list[OutputField], indent: str) -> list[str]:
    lines = []
    for f in fields:
        kind = f"{f.type} of objects" if f.fields is not None and f.type == "array" else f.type
        lines.append(f"{indent}- {f.name}: {kind}{'; ' + f.description if f.description else ''}")
        lines += _fields(f.fields or [], indent + "  ")
    return lines


def tool_signature(tool: ToolSchema) -> str:
    """A written tool's signature on one line: parameters (type, optional, allowed values), output
    fields (nested ones in braces) and errors, so that later schema requests reuse its names,
    shapes and status values instead of remembering them."""
    params = []
    for p in tool.parameters:
        kind = f"{p.items}[]" if p.type == "array" else p.type
        kind += f" {p.format}" if p.format else ""
        kind += f" {'|'.join(p.enum)}" if p.enum else ""
        params.append(f"{p.name}{'' if p.required else '?'}: {kind}")
    errors = f" raises {', '.join(dict.fromkeys(r.error for r in tool.raises))}" if tool.raises else ""
    return (f"{tool.name}({', '.join(params)}) -> {{{_field_names(tool.output)}}}"
            f"{' writes' if tool.mutates else ''}{errors}")


def _field_names(fields: list[OutputField]) -> str:
    """Output fields by name and type; a status field keeps its description, where its values are."""
    out = []
    for f in fields:
        text = f"{f.name}: " + ("[{" + _field_names(f.fields) + "}]" if f.fields else f.type)
        if f.name == "status" or f.name.endswith("_status"):
            text += f" ({f.description})" if f.description else ""
        out.append(text)
    return ", ".join(out)
