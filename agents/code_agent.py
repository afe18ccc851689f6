"""Code agent: one tool schema → its implementation against the compiled DB layer."""

from __future__ import annotations

import json

from agents.answers import ToolCode
from agents.llm import LLM, StepKey
from agents.prompts import CODE_SYSTEM
from domains.spec import DomainSpec, ToolSchema


def write_tool(llm: LLM, spec: DomainSpec, tool: ToolSchema, db_source: str) -> str:
    tables = [spec.db.table(t).model_dump(exclude_defaults=True) for t in spec.tool_tables.get(tool.name, [])]
    prompt = (
        f"Implement the tool `{tool.name}`.\n\nTool schema:\n{json.dumps(tool.model_dump(exclude_defaults=True), indent=1)}"
        f"\n\nTables it uses:\n{json.dumps(tables, indent=1)}\n\nThe db module (compiled from the DB schema):\n{db_source}"
    )
    return llm.structured(StepKey("code", tool.name), CODE_SYSTEM, prompt, ToolCode).code
