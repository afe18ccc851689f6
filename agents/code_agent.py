"""Code agent: tool schemas → their implementations against the compiled DB layer.

Tools that use the same tables are implemented a few per request: the request shows their
tables' classes and the conventions once for all of them. Each tool is still a module of its
own, judged on its own.
"""

from __future__ import annotations

from agents.answers import ToolCodes, tools_named
from agents.prompts import CODE_SYSTEM
from agents.views import describe_tables, describe_tool
from domains.policy import prompt_section
from domains.spec import DomainSpec
from llm import LLM, StepKey

GROUP = 4  # tools per request: about 2,000 output tokens


def code_groups(spec: DomainSpec) -> list[list[str]]:
    """The tools in requests of up to GROUP that use exactly the same tables, in the spec's order."""
    same: dict[tuple[str, ...], list[str]] = {}
    for tool in spec.tools:
        same.setdefault(tuple(spec.tables_of(tool.name)), []).append(tool.name)
    return [names[i:i + GROUP] for names in same.values() for i in range(0, len(names), GROUP)]


def write_tools(llm: LLM, spec: DomainSpec, names: list[str]) -> dict[str, str]:
    """Each tool's code, by name, from one request for the group `names`."""
    sections = []
    for name in names:
        tool = spec.tool(name)
        schema = describe_tool(tool, preconditions=not spec.policy.preconditions.get(name))  # else the policy's
        policy = prompt_section(spec.policy, name, spec.tool_tables.get(name, []), tool.mutates)
        # the domain's rules the code must honour (none for a domain without a policy)
        sections.append(f"### {name}\n{schema}" + (f"\n\n{policy}" if policy else ""))
    # Only the classes of the tables the tools touch, a line per column rather than their source:
    # the helpers are in the conventions.
    tables = describe_tables(spec.db, spec.tables_of(names[0]), classes=True)
    one = len(names) == 1
    ask = (f"Implement the tool `{names[0]}`." if one else
           f"Implement the tools {', '.join(f'`{n}`' for n in names)}, each in a module of its own.")
    prompt = (f"{ask}\n\n" + "\n\n".join(sections) + f"\n\nThe db module's classes of "
              f"{'its' if one else 'their'} tables, a line per column:\n{tables}")
    answer = llm.structured(StepKey.batch("code", names), CODE_SYSTEM, prompt, ToolCodes, check=tools_named(names))
    return {t.name: t.code for t in answer.tools}
