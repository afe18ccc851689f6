"""What prompts show of the database: tables a line per column, shorter than their JSON or their
compiled classes (the code and debug prompts name each table's class)."""

from __future__ import annotations

from domains.db_layer import class_name
from domains.spec import DBSchema


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
