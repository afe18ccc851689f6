"""Code agent: one tool schema → its implementation against the compiled DB layer."""

from __future__ import annotations

from agents.answers import ToolCode
from agents.llm import LLM, StepKey
from agents.prompts import CODE_SYSTEM
from agents.views import describe_tables, describe_tool
from domains.policy import prompt_section
from domains.spec import DomainSpec, ToolSchema


def write_tool(llm: LLM, spec: DomainSpec, tool: ToolSchema) -> str:
    # Only the classes of the tables the tool touches, a line per column rather than their source:
    # the helpers are in the conventions.
    tables = describe_tables(spec.db, spec.tables_of(tool.name), classes=True)
    schema = describe_tool(tool, preconditions=not spec.policy.preconditions.get(tool.name))  # else the policy's
    prompt = (f"Implement the tool `{tool.name}`.\n\nTool schema:\n{schema}"
              f"\n\nThe db module's classes of its tables, a line per column:\n{tables}")
    policy = prompt_section(spec.policy, tool.name, spec.tool_tables.get(tool.name, []), tool.mutates)
    if policy:  # the domain's rules the code must honour (none for a domain without a policy)
        prompt += f"\n\n{policy}"
    return llm.structured(StepKey("code", tool.name), CODE_SYSTEM, prompt, ToolCode).code
