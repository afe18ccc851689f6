"""Database agent: tool schemas → a consolidated DB schema and the tool→table mapping."""

from __future__ import annotations

from agents.answers import DatabaseDesign
from agents.drift import drift_conflicts
from agents.prompts import DATABASE_SYSTEM
from agents.views import describe_tool
from domains.spec import DBSchema, Table, ToolSchema
from llm import LLM, StepKey


def design_database(llm: LLM, domain: str, tools: list[ToolSchema]) -> tuple[DBSchema, dict[str, list[str]]]:
    prompt = f"Domain: {domain}\n\nTool schemas:\n\n" + "\n\n".join(describe_tool(t) for t in tools)
    names = [t.name for t in tools]
    # consolidating checks the cross-references (foreign keys, tables that exist): a slip in
    # them is answered with the error as a re-ask, not a traceback
    drift_asked = []

    def check(answer: DatabaseDesign) -> None:
        cross_references(answer, names)
        db, mapping = consolidate(answer, names)
        conflicts = drift_conflicts(tools, db, mapping)
        # put to the model once: what it leaves after that is reported, not fought over
        if conflicts and not drift_asked:
            drift_asked.append(conflicts)
            raise ValueError("the tools and the database disagree; give the database the columns and allowed "
                             "values the tools use:\n" + "\n".join(f"- {c}" for c in conflicts))

    design = llm.structured(StepKey("database"), DATABASE_SYSTEM, prompt, DatabaseDesign, check=check)
    return consolidate(design, names)


def cross_references(design: DatabaseDesign, tool_names: list[str]) -> None:
    """The tool→table map names every tool and only tools and tables that exist (a ValueError, re-asked)."""
    tables = {t.name for t in design.tables}
    problems = [f"tool_tables names an unknown tool {t!r}" for t in design.tool_tables if t not in tool_names]
    problems += [f"tool_tables[{tool!r}] names an unknown table {t!r} (tables: {sorted(tables)})"
                 for tool, names in design.tool_tables.items() for t in names if t not in tables]
    missing = [t for t in tool_names if t not in design.tool_tables]
    if missing:
        problems.append(f"tool_tables leaves out {missing}: map every tool to the tables it reads or writes")
    if problems:
        raise ValueError("; ".join(problems))


def consolidate(design: DatabaseDesign, tool_names: list[str]) -> tuple[DBSchema, dict[str, list[str]]]:
    """De-duplicate tables, drop tables no tool touches (and mappings to unknown tools or tables)."""
    tables: dict[str, Table] = {}
    for table in design.tables:
        if table.name in tables:  # same entity proposed twice: merge its columns
            known = {c.name for c in tables[table.name].columns}
            extra = [c for c in table.columns if c.name not in known]
            tables[table.name] = tables[table.name].model_copy(update={"columns": tables[table.name].columns + extra})
        else:
            tables[table.name] = table
    mapping = {
        tool: sorted(dict.fromkeys(t for t in design.tool_tables.get(tool, []) if t in tables))
        for tool in tool_names
    }
    used = {t for names in mapping.values() for t in names}
    # A table only referenced through foreign keys of a used table is still needed.
    changed = True
    while changed:
        changed = False
        for name in list(used):
            for column in tables[name].columns:
                target = column.foreign_key.split(".")[0] if column.foreign_key else None
                if target and target in tables and target not in used:
                    used.add(target)
                    changed = True
    kept = [t for t in tables.values() if t.name in used]
    return DBSchema(tables=kept), mapping
