"""Test agent: one tool schema → procedural tests, each with its own matched DB instance."""

from __future__ import annotations

import json

from agents.answers import ToolTests
from agents.llm import LLM, StepKey
from agents.prompts import TESTS_SYSTEM
from domains.spec import DomainSpec, ToolSchema, ToolTest


def write_tests(llm: LLM, spec: DomainSpec, tool: ToolSchema) -> list[ToolTest]:
    # The test agent sees the contract, not the code: tests written from the code would only
    # confirm what the code already does.
    tables = [spec.db.table(t).model_dump(exclude_defaults=True) for t in spec.tool_tables.get(tool.name, [])]
    referenced = sorted({c.foreign_key.split(".")[0] for t in tables for c in spec.db.table(t["name"]).columns if c.foreign_key})
    prompt = (
        f"Write procedural tests for the tool `{tool.name}`.\n\nTool schema:\n"
        f"{json.dumps(tool.model_dump(exclude_defaults=True), indent=1)}\n\nTables it uses:\n{json.dumps(tables, indent=1)}"
        f"\n\nTables they reference: {', '.join(referenced) or 'none'}"
    )
    return llm.structured(StepKey("tests", tool.name), TESTS_SYSTEM, prompt, ToolTests).tests
