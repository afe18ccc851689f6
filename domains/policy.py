"""A domain's policy: the rules its tools enforce and an agent must follow, as data and as words.

As in tau2-bench, the policy sits beside the domain's data model and tools. The pipeline's
policy step states it once (spec.json's `policy`); from it come the MCP server's instructions
and policy.md (what the agent reads), the "Requires: ..." of served tool descriptions, the
preconditions and status table the code and test prompts show, and the invariants
`verification.invariants` checks on database states.

    machines       status lifecycles: table, status column, initial / terminal / closed values,
                   allowed transitions from -> [to] with the tools that make them
    preconditions  tool -> rules that must hold before a call, each with the error it raises
    invariants     statements every state keeps, with a checkable form where one fits:
                   allowed_values, at_most (rows per group), requires_related, not_null
    clock          what "now" is: the episode clock, session.info["now"] (read by tools with
                   db.now(session) / db.today(session)), and the tools whose rules depend on it

This module imports nothing from domains.spec (spec.py imports it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from domains.db_runtime import DEFAULT_NOW, ErrorName


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rule(_Model):
    """One precondition of a tool, in a sentence, and the error the tool raises when it fails."""

    rule: str = Field(description="one sentence: what must hold before the call")
    error: ErrorName | None = Field(None, description="the error the tool raises when the rule fails")


class Transition(_Model):
    """Moves from one status value: the values it may go to and the tools that make these moves.
    A value may have several entries, one per group of moves made by the same tools."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    from_: str = Field(alias="from", description="the value before")
    to: list[str] = Field(min_length=1, description="the values it may move to")
    tools: list[str] = Field([], description="the tools that make these moves")


class StatusMachine(_Model):
    """The lifecycle of one status column."""

    table: str
    column: str
    initial: list[str] = Field(min_length=1, description="the values a new row starts in")
    terminal: list[str] = Field([], description="values no transition leaves")
    closed: list[str] = Field([], description="values the domain calls closed, if it uses the word")
    transitions: list[Transition] = Field(min_length=1)
    note: str = Field("", description="what the tools do not check about these moves, if anything")

    def states(self) -> list[str]:
        """Every value the machine names, in first-mention order."""
        seen = list(self.initial)
        for t in self.transitions:
            seen += [t.from_, *t.to]
        seen += self.terminal + self.closed
        return list(dict.fromkeys(seen))

    def moves(self) -> dict[tuple[str, str], list[str]]:
        """(from, to) -> the tools the machine names for that move."""
        out: dict[tuple[str, str], list[str]] = {}
        for t in self.transitions:
            for target in t.to:
                out.setdefault((t.from_, target), [])
                out[(t.from_, target)] += [x for x in t.tools if x not in out[(t.from_, target)]]
        return out


CheckKind = Literal["allowed_values", "at_most", "requires_related", "not_null"]


class Check(_Model):
    """The checkable form of an invariant. `where` (and `related_where`) select rows: each named
    column's value is one of the listed values.

    allowed_values    every selected row's `column` is one of `values` (default: the column's choices)
    at_most           at most `max` selected rows per value of `group_by` ([]: in the whole table)
    requires_related  every selected row has a row in `related` with equal `on` columns
                      (column of table -> column of related) that `related_where` selects
    not_null          every selected row has a value in each of `columns`
    """

    kind: CheckKind
    table: str
    where: dict[str, list[Any]] = {}
    column: str | None = None
    values: list[Any] | None = None
    group_by: list[str] = []
    max: int | None = Field(None, ge=0)
    related: str | None = None
    on: dict[str, str] = {}
    related_where: dict[str, list[Any]] = {}
    columns: list[str] = []

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Check:
        needs = {"allowed_values": ["column"], "at_most": ["max"], "requires_related": ["related", "on"],
                 "not_null": ["columns"]}[self.kind]
        missing = [f for f in needs if getattr(self, f) in (None, {}, [])]
        if missing:
            raise ValueError(f"a {self.kind} check needs {', '.join(missing)}")
        return self


class Invariant(_Model):
    statement: str = Field(description="one sentence every database state keeps")
    check: Check | None = Field(None, description="its checkable form, where one of the kinds expresses it")


class Clock(_Model):
    """What "now" is for the tools: the episode clock (CLOCK_SOURCE, read with CLOCK_READ,
    DEFAULT_NOW unless the task sets one). Only the tools that depend on it are domain-specific."""

    tools: list[str] = Field([], description="the tools whose rules or results depend on today's date or the time")


class Policy(_Model):
    """spec.json's `policy`; empty for domains built before there was one."""

    machines: list[StatusMachine] = []
    preconditions: dict[str, list[Rule]] = Field({}, description="tool name -> its rules")
    invariants: list[Invariant] = []
    clock: Clock = Clock()

    def empty(self) -> bool:
        return not (self.machines or self.preconditions or self.invariants or self.clock.tools)

    def machines_of(self, tables: list[str]) -> list[StatusMachine]:
        return [m for m in self.machines if m.table in tables]


# -- cross-references: every name the policy uses exists ---------------------------------------

def _choices(db, table: str, column: str) -> list | None:
    for t in db.tables:
        if t.name == table:
            for c in t.columns:
                if c.name == column:
                    return c.choices
    return None


def cross_references(policy: Policy, tools: list, db, tool_tables: dict[str, list[str]]) -> None:
    """Raise ValueError naming every problem: tables, columns, tools or status values that do not
    exist, transitions out of terminal values, transitions made by tools that do not write the
    table, and tools whose schema raises PreconditionFailed or Conflict left without preconditions."""
    columns = {t.name: [c.name for c in t.columns] for t in db.tables}
    by_name = {t.name: t for t in tools}
    problems: list[str] = []

    def table_ok(where: str, table: str | None) -> bool:
        if table not in columns:
            problems.append(f"{where}: unknown table {table!r} (tables: {sorted(columns)})")
            return False
        return True

    def column_ok(where: str, table: str, column: str) -> bool:
        if column not in columns[table]:
            problems.append(f"{where}: table {table} has no column {column!r} (columns: {columns[table]})")
            return False
        return True

    def values_ok(where: str, table: str, column: str, values) -> None:
        choices = _choices(db, table, column)
        bad = [v for v in values if choices is not None and v is not None and v not in choices]
        if bad:
            problems.append(f"{where}: {table}.{column} has no value {bad[0]!r} (allowed: {choices})")

    def tool_ok(where: str, name: str) -> bool:
        if name not in by_name:
            problems.append(f"{where}: unknown tool {name!r}")
            return False
        return True

    seen = set()
    for i, m in enumerate(policy.machines):
        where = f"machines[{i}] ({m.table}.{m.column})"
        if (m.table, m.column) in seen:
            problems.append(f"{where}: this column has two machines; give one")
        seen.add((m.table, m.column))
        if not table_ok(where, m.table) or not column_ok(where, m.table, m.column):
            continue
        values_ok(where, m.table, m.column, m.states())
        pairs = [(t.from_, to) for t in m.transitions for to in t.to]
        for a, b in sorted({p for p in pairs if pairs.count(p) > 1}):
            problems.append(f"{where}: the move {a!r} -> {b!r} is given twice; give each move once")
        for a, b in sorted({p for p in pairs if p[0] == p[1]}):
            problems.append(f"{where}: {a!r} -> {b!r} is no move; leave it out")
        for value in sorted({t.from_ for t in m.transitions} & set(m.terminal)):
            problems.append(f"{where}: {value!r} is terminal but has transitions out of it")
        for t in m.transitions:
            for name in t.tools:
                if tool_ok(f"{where} transition from {t.from_!r}", name):
                    tool = by_name[name]
                    if not tool.mutates or m.table not in tool_tables.get(name, []):
                        problems.append(f"{where} transition from {t.from_!r}: tool {name!r} does not write "
                                        f"table {m.table} (tool_tables: {tool_tables.get(name, [])})")
    for name in policy.preconditions:
        tool_ok("preconditions", name)
    for name in policy.clock.tools:
        tool_ok("clock.tools", name)
    for tool in tools:
        declared = sorted({r.error for r in tool.raises} & {"PreconditionFailed", "Conflict"})
        if declared and not policy.preconditions.get(tool.name):
            problems.append(f"preconditions: {tool.name!r} raises {' and '.join(declared)} but has no rules; "
                            "state when it does")
    for i, inv in enumerate(policy.invariants):
        c = inv.check
        where = f"invariants[{i}]"
        if c is None or not table_ok(where, c.table):
            continue
        for column, values in c.where.items():
            if column_ok(f"{where} where", c.table, column):
                values_ok(f"{where} where", c.table, column, values)
        for column in ([c.column] if c.column else []) + c.group_by + c.columns:
            column_ok(where, c.table, column)
        if c.kind == "allowed_values" and c.column in columns[c.table] and c.values:
            values_ok(where, c.table, c.column, c.values)
        if c.kind == "requires_related" and table_ok(f"{where} related", c.related):
            for mine, theirs in c.on.items():
                column_ok(f"{where} on", c.table, mine)
                column_ok(f"{where} on", c.related, theirs)
            for column, values in c.related_where.items():
                if column_ok(f"{where} related_where", c.related, column):
                    values_ok(f"{where} related_where", c.related, column, values)
    if problems:
        raise ValueError("; ".join(problems))


# -- what the agent and the prompts are shown --------------------------------------------------

def rule_text(rule: Rule) -> str:
    text = rule.rule.strip().rstrip(".")
    return f"{text} (else {rule.error})" if rule.error else text


def requirements(policy: Policy, tool) -> list[str]:
    """The rules a tool's served description ends with: the policy's, else the schema's own
    preconditions (domains built before there was a policy)."""
    if tool.name in policy.preconditions:
        return [rule_text(r) for r in policy.preconditions[tool.name]]
    return [p.strip().rstrip(".") for p in tool.preconditions if p.strip()]


def described(description: str, rules: list[str]) -> str:
    """A tool description with its preconditions appended: "... Requires: a; b."."""
    if not rules:
        return description
    return f"{description.rstrip()} Requires: {'; '.join(rules)}."


def _summary(machine: StatusMachine) -> str:
    return (f"{machine.table}.{machine.column}: new rows start as {', '.join(machine.initial)}"
            + (f"; terminal: {', '.join(machine.terminal)}" if machine.terminal else "")
            + (f"; closed: {', '.join(machine.closed)}" if machine.closed else ""))


def transition_lines(machine: StatusMachine) -> list[str]:
    """A machine as a Markdown table, with its note (policy.md)."""
    lines = ["| from | to | by |", "| --- | --- | --- |"]
    lines += [f"| {t.from_} | {', '.join(t.to)} | {', '.join(t.tools) or '-'} |" for t in machine.transitions]
    if machine.note:
        lines += ["", machine.note.strip()]
    return lines


def prompt_section(policy: Policy, tool_name: str, tables: list[str], mutates: bool) -> str:
    """What the code and test prompts add for one tool: its preconditions; for a tool that writes a
    table with a status column, the moves the policy allows it (any other move is refused; the other
    tools' moves are policy.md's business, not this tool's), else that it moves none and that a row it
    creates starts at the lifecycle's initial value; whether it reads
    the clock. Empty without a policy."""
    parts = []
    rules = policy.preconditions.get(tool_name, [])
    if rules:
        parts.append("Its preconditions in the domain policy (the tool checks each and raises the error named "
                     "when it fails):\n" + "\n".join(f"- {rule_text(r)}" for r in rules))
    for m in policy.machines_of(tables) if mutates else []:
        mine = [f"- {t.from_} -> {', '.join(t.to)}" for t in m.transitions if tool_name in t.tools]
        if mine:
            parts.append(f"The status moves the policy allows this tool ({_summary(m)}); it makes no other move "
                         f"of {m.table}.{m.column}:\n" + "\n".join(mine))
        else:
            # a creator moves nothing either: its rows start where the lifecycle does
            start = m.initial[0] if len(m.initial) == 1 else f"one of {', '.join(m.initial)}"
            parts.append(f"The policy names no move of {m.table}.{m.column} by this tool: a {m.table} row it "
                         f"creates starts as {start} (the lifecycle's initial value); a row that exists keeps "
                         f"its {m.column}.")
    if tool_name in policy.clock.tools:
        parts.append("It depends on the episode clock: compare with now(session) / today(session), never the real date.")
    return "\n\n".join(parts)


def render(name: str, description: str, policy: Policy, tools: list[str] | None = None) -> str:
    """policy.md: the domain, today's date rule, status tables, preconditions per tool and
    invariants. `tools` limits the preconditions to the tools served (default: all)."""
    lines = [f"# {name} policy", "", description.strip(), "",
             "Act only through the tools, on behalf of the user. Look records up instead of asking the user "
             "for internal identifiers, do only what the user asks, and ask when a detail is missing.", "",
             "## Today's date", "",
             "Each episode runs on its own clock: \"today\" and \"now\" are the clock's date and time, not the "
             "real ones. The current date and time are stated at the start of the episode (the MCP server's "
             "instructions end with them). Dates are YYYY-MM-DD and times YYYY-MM-DDTHH:MM:SS, without a "
             "time zone."]
    clocked = [t for t in policy.clock.tools if tools is None or t in tools]
    if clocked:
        lines += ["", "These tools compare dates with the clock or answer relative to it: "
                  + ", ".join(f"`{t}`" for t in clocked) + "."]
    if policy.machines:
        lines += ["", "## Status lifecycles"]
        for m in policy.machines:
            head = [f"New rows start as {', '.join(m.initial)}."]
            if m.terminal:
                head.append(f"Terminal (no move out): {', '.join(m.terminal)}.")
            if m.closed:
                head.append(f"Closed: {', '.join(m.closed)}.")
            lines += ["", f"### {m.table}.{m.column}", "", " ".join(head), "", *transition_lines(m)]
    shown = [t for t in policy.preconditions if tools is None or t in tools]
    if shown:
        lines += ["", "## Tool preconditions", "",
                  "A tool refuses a call that breaks one of its rules, with the error named, and changes nothing."]
        for tool in shown:
            if policy.preconditions[tool]:
                lines += ["", f"### `{tool}`", ""] + [f"- {rule_text(r)}" for r in policy.preconditions[tool]]
    if policy.invariants:
        lines += ["", "## Invariants", "",
                  "Keep these true in every state of the database. The tools enforce some of them, not all: "
                  "before a change that could break one, check it.", ""]
        lines += [f"- {inv.statement.strip()}" for inv in policy.invariants]
    return "\n".join(lines).rstrip() + "\n"


def clock_sentence(now: str | None) -> str:
    """The episode's current date and time, in words an agent can use."""
    moment = datetime.fromisoformat(now or DEFAULT_NOW)
    return (f"The episode clock reads {moment.isoformat(timespec='seconds')}: today is "
            f"{moment:%A} {moment.day} {moment:%B %Y}, and the time is {moment:%H:%M}.")


def episode_instructions(text: str, now: str | None) -> str:
    """What an agent is told at the start of an episode: the domain's policy text and the date."""
    return f"{text.rstrip()}\n\n## Now\n\n{clock_sentence(now)}\n"
