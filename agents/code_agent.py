"""Code agent: one tool schema → its implementation against the compiled DB layer."""

from __future__ import annotations

import json

from agents.answers import ToolCode
from agents.llm import LLM, StepKey
from agents.prompts import CODE_SYSTEM
from domains.db_layer import module_view
from domains.policy import prompt_section
from domains.spec import DomainSpec, ToolSchema


def write_tool(llm: LLM, spec: DomainSpec, tool: ToolSchema, db_source: str) -> str:
    # Only the classes of the tables the tool touches: the helpers are in the conventions.
    prompt = (
        f"Implement the tool `{tool.name}`.\n\nTool schema:\n{json.dumps(tool.model_dump(exclude_defaults=True))}"
        f"\n\nThe db module's classes for the tables it uses:\n{module_view(db_source, spec.tables_of(tool.name))}"
    )
    policy = prompt_section(spec.policy, tool.name, spec.tool_tables.get(tool.name, []), tool.mutates)
    if policy:  # the domain's rules the code must honour (none for a domain without a policy)
        prompt += f"\n\n{policy}"
    return llm.structured(StepKey("code", tool.name), CODE_SYSTEM, prompt, ToolCode).code
