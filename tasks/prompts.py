"""What the task stage asks the model, and the structured answers it accepts."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from domains.spec import DomainSpec, State, ToolSchema
from domains.task_model import ToolCall

SYSTEM = ("You synthesize verifiable tasks for training tool-using agents in the {domain} domain. "
          "The environment is a database behind the tools below; every answer is checked by executing it.")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChainProgram(_Answer):
    goal: str = Field(description="the user's goal in one sentence")
    code: str = Field(description="Python statements; call(tool, **arguments) runs a tool and returns its JSON result")

    @field_validator("code")
    @classmethod
    def _parses(cls, code: str) -> str:
        compile(code, "<chain>", "exec", dont_inherit=True)
        return code


class InitialState(_Answer):
    rows: State = Field(description="table -> rows: exactly what the program needs to run, consistent across tables")


class Gate(_Answer):
    p: float = Field(ge=0.0, le=1.0, description="compatibility score: how worthwhile and solvable another chain is")
    reason: str


class Instruction(_Answer):
    draft: str = Field(description="the request stated explicitly, step by step")
    instruction: str = Field(description="the refined request, as the user would say it")
    user_profile: dict[str, Any] = Field(description="persona, known_info (what the user can tell the agent), "
                                                     "and preferences for follow-up questions")


class Policies(_Answer):
    policies: dict[str, Literal["exempt", "hard", "semantic"]] = Field(description="'table.column' -> policy")


def signature(tool: ToolSchema) -> str:
    params = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.type}"
                       + (f" in {p.enum}" if p.enum else "") for p in tool.parameters)
    out = ", ".join(f.name for f in tool.output)
    return f"{tool.name}({params}) -> {{{out}}}  # {tool.description.split('. ')[0]}"


def schema_lines(spec: DomainSpec) -> str:
    lines = []
    for table in spec.db.tables:
        cols = []
        for c in table.columns:
            extra = " pk" if c.primary_key else f" -> {c.foreign_key}" if c.foreign_key else ""
            extra += f" in {c.choices}" if c.choices else ""
            extra += "" if c.nullable or c.primary_key else " required"
            cols.append(f"{c.name}: {c.type}{extra}")
        lines.append(f"{table.name} (ids {table.id_prefix}-0001..): " + "; ".join(cols))
    return "\n".join(lines)


def chain_prompt(spec: DomainSpec, tools: list[ToolSchema], seed_chain: list[str], level: int,
                 feedback: str) -> str:
    text = (f"Domain: {spec.description}\n\nTools:\n" + "\n".join(signature(t) for t in tools)
            + f"\n\nSeed tool chain sampled from the dependency graph: {' -> '.join(seed_chain)}\n"
            f"Complexity level {level} of 3 (1: one or two changes, 3: a longer errand).\n\n"
            "Write the chain as a Python program for a realistic goal of one user, built around the seed "
            "chain's tools: call(tool, **arguments) runs a tool and returns its result, so outputs flow into "
            "later calls. Values the user would know (names, companies, dates, amounts) are literals; "
            "identifiers come from earlier results. The goal must change the database.\n"
            "The executed chain is checked on the tool graph: every identifier a call takes comes from an "
            "earlier call's result (look records up with a lister or search first), a call comes after the one "
            "that establishes its precondition, and no call uses a table after a call deleted from it.")
    return text + (f"\n\nThe previous answer failed:\n{feedback}\nFix it." if feedback else "")


def state_prompt(spec: DomainSpec, program: ChainProgram, now: str, feedback: str) -> str:
    text = (f"Database schema:\n{schema_lines(spec)}\n\nThe clock reads {now}.\nProgram:\n{program.code}\n\n"
            "Write the initial database state this program needs: the rows it looks up, consistent across "
            "tables (every foreign key resolves), with ids in the table's id format. Leave out rows it creates.")
    # the failure may be the previous program's, which the program above already replaces
    return text + (f"\n\nThe previous attempt (its program and state) failed:\n{feedback}\nWrite the state the "
                   "program above needs." if feedback else "")


def gate_prompt(remaining: int, complexity: float, feasibility: float, subgraph: list[str]) -> str:
    return (f"A task environment covers {len(subgraph)} tools: {', '.join(subgraph)}.\n"
            f"Structural complexity c(H) = {complexity:.3f}: it grows with the tools and dependencies covered, and "
            "1.0 means the task already has as much structure as one task should (above 1, more: a reason not "
            f"to add). Tools left outside: |D| = "
            f"{remaining}. Feasibility g(D) = {feasibility:.3f}: the share of attempts that found an executable "
            "chain among the remaining tools.\nShould another tool chain from the remaining tools be added? "
            "Balance diversity against solvability and return p in [0, 1].")


def instruction_prompt(calls: list[ToolCall], results: list, feedback: str,
                       lookalikes: list[tuple[str, dict]] = ()) -> str:
    steps = "\n".join(f"{i}. {c.tool}({json.dumps(c.arguments, sort_keys=True)}) -> {_shown(r)}"
                      for i, (c, r) in enumerate(zip(calls, results), 1))
    text = ("The reference solution of a task, as executed:\n" + steps + "\n\n"
            "Write what the user asks for. Ground it in these calls only: state the external values the "
            "calls use (names, companies, dates, amounts, choices) and never a system identifier (no record "
            "ids such as those the tools return). First a draft that states every step explicitly, then a "
            "refined instruction that sounds like a person: implicit where the agent can infer a step, "
            "concise, yet with every value the task needs. The user profile lets a user simulator answer "
            "follow-up questions.")
    if lookalikes:  # the reward cannot see an ambiguous request; the agent would
        text += ("\n\nOther records share a name or title with the ones this task is about; the agent must not "
                 "confuse them, so the instruction says what tells the user's own apart (a date, an amount, a "
                 "kind, a status):\n" + "\n".join(f"- {table}: {json.dumps(row, sort_keys=True)}"
                                                   for table, row in lookalikes[:8]))
    return text + (f"\n\nThe previous answer was rejected:\n{feedback}\nFix it." if feedback else "")


def _shown(result, limit: int = 1500) -> str:
    """A call's result as the prompt shows it: whole, or cut with a mark that says so."""
    text = json.dumps(result, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + f" ... ({len(text) - limit} more characters)"


def policies_prompt(columns: list[str], calls: list[ToolCall]) -> str:
    return ("A task's reward compares the final database with the expected one, column by column: 'hard' "
            "(exact), 'semantic' (same meaning in other words) or 'exempt' (not checked).\n"
            f"The task's solution: {json.dumps([c.model_dump() for c in calls], sort_keys=True)}\n"
            f"Give a policy for each of these columns: {', '.join(columns)}.")
