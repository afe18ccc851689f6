"""What a task family is, as the model is asked for it and as its generator must answer.

One request per seed chain: the model writes a generator, `instance(rng, level)`, which draws the
rows, parameters, instruction and user profile of one task instance from a seeded random
generator, and one chain program that solves every instance by reading `params`. The contract is
stated in the prompt with a worked example; `Family` checks the answer's code before anything
runs it, and `Drawn` checks what the generator returned, in the parent.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, field_validator, model_validator

from domains.spec import DomainSpec, State, ToolSchema
from sandbox.guard import parse
from tasks.prompts import schema_lines, signature

MAX_ROWS = 200  # an instance's own rows; distractors are added by the stage

EXAMPLE = '''Example, for another domain (a library: tables member(member_id pk, full_name, email) and
loan(loan_id pk, member_id -> member.member_id, book_title, due_date, status); tools
find_member_by_email(email) -> {member_id, loans} and extend_loan(loan_id, days)):

generator:
FIRST = ["Ana", "Tomas", "Mei", "Kwame", "Sofia", "Ravi", "Lena", "Omar"]
LAST = ["Ruiz", "Becker", "Lin", "Mensah", "Rossi", "Iyer", "Novak", "Haddad"]
BOOKS = ["The Overstory", "Middlemarch", "Dune", "Beloved", "Pachinko", "Circe", "Hamnet", "Kindred"]

def instance(rng, level):
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    email = name.lower().replace(" ", ".") + "@example.com"
    books = rng.sample(BOOKS, level)  # a higher level: more for the user to do
    days = rng.choice([7, 14, 21])
    rows = {"member": [{"member_id": "MEM-0001", "full_name": name, "email": email}],
            "loan": [{"loan_id": f"LOAN-{i + 1:04d}", "member_id": "MEM-0001", "book_title": book,
                      "due_date": "2025-03-05", "status": "active"} for i, book in enumerate(books)]}
    titles = " and ".join(books)
    instruction = rng.choice([
        f"Hi, I'm {name} ({email}). Could you extend my loans of {titles} by {days} days?",
        f"Please give me {days} more days on {titles}; my email is {email}.",
        f"{titles}: I need {days} extra days, can you do that? It's {name}, {email}.",
    ])
    return {"rows": rows, "params": {"email": email, "books": books, "days": days},
            "instruction": instruction,
            "user_profile": {"name": name, "persona": "a busy reader who answers briefly",
                             "known_info": [email, *books], "unknown_info": ["loan ids"]}}

program:
member = call("find_member_by_email", email=params["email"])
for loan in member["loans"]:
    if loan["book_title"] in params["books"]:
        call("extend_loan", loan_id=loan["loan_id"], days=params["days"])'''

CONTRACT = """Write a task family: one generator of many task instances built around the seed chain's tools,
and one program that solves every instance.

1. "generator": Python source that defines instance(rng, level). rng is a random.Random seeded per
   instance: draw every choice from it (rng.choice, rng.sample, rng.randint, rng.random), nothing
   else random. level is 1, 2 or 3; a higher level gives the user more to do (more records to
   handle, through a list in params) where the chain allows it. It may import only datetime, re,
   math, json, decimal, collections, itertools, functools and string, and calls no tool. It returns
   a dict with exactly these keys:
   - "rows": {{table: [row, ...]}}: the initial database rows the program needs, consistent across
     tables (every foreign key resolves, required columns set, values within the schema), ids in
     the table's id format; leave out the rows the program creates. The stage adds distractors.
   - "params": {{name: value}}: the values the program uses that the user gives (names, titles,
     dates, amounts, choices), never an id.
   - "instruction": the user's request in one of several phrasings picked with rng, stating every
     value of params as params holds it (dates as YYYY-MM-DD, the same numbers), never an id.
   - "user_profile": {{"name", "persona", "known_info": [...], "unknown_info": [...]}}.
   Vary the people, companies, titles, amounts, dates and wording per seed: lists of 8 or more
   realistic values written in the generator, so that no two instances read alike.
   Where the user asks for information instead of a change, the program only reads and the dict
   has a fifth key, "facts": {{label: value}}, what the answer must state, each value as a tool's
   result holds it (a field of a record, or how many records a list holds).
2. "program": Python statements that solve any instance. call(tool, **arguments) runs a tool and
   returns its JSON result; params is the instance's params. Records are looked up with the tools
   by values in params; ids come from earlier results, never literals. It must change the database
   (unless the instances have facts).

The clock reads {now}. Every instance is checked by execution: its rows loaded, the program run on
them, distractors added and proven harmless, the reward checked; the first failure comes back to you.

{example}"""


class Family(BaseModel):
    model_config = ConfigDict(extra="forbid")

    goal: str = Field(description="what the users of this family want, in one sentence")
    generator: str = Field(description="Python source defining instance(rng, level) -> dict")
    program: str = Field(description="Python statements over call(tool, **arguments) and params")

    @model_validator(mode="after")
    def _code_runs(self) -> Family:
        try:
            compile(self.program, "<chain>", "exec", dont_inherit=True)
            tree = parse(self.generator)
        except SyntaxError as error:  # a ValueError, so that the gateway re-asks
            raise ValueError(f"line {error.lineno}: {error.msg}") from None
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "instance"]
        if not found or len(found[0].args.args) != 2:
            raise ValueError("the generator must define instance(rng, level) at its top level")
        return self


class Drawn(BaseModel):
    """What `instance(rng, level)` must return."""

    model_config = ConfigDict(extra="forbid")

    rows: State
    params: dict[str, Any]
    instruction: str = Field(min_length=8)
    user_profile: dict[str, Any]
    facts: dict[str, StrictStr | StrictInt | StrictFloat] | None = Field(None, min_length=1)

    @field_validator("rows")
    @classmethod
    def _bounded(cls, rows: State) -> State:
        count = sum(len(r) for r in rows.values())
        if count > MAX_ROWS:
            raise ValueError(f"{count} rows: an instance holds at most {MAX_ROWS} (the stage adds distractors)")
        return rows


def drawn(raw: object) -> Drawn:
    """The generator's result as a `Drawn`, or a ValueError that says what is wrong with it."""
    if not isinstance(raw, dict):
        raise ValueError(f"instance() returned {type(raw).__name__}, not a dict with rows, params, instruction "
                         "and user_profile (and facts)")
    try:
        return Drawn.model_validate(raw)
    except ValueError as error:
        lines = [line for line in str(error).splitlines()[1:] if not line.strip().startswith("For further")]
        raise ValueError("instance() returned a malformed dict: " + "; ".join(lines)[:600]) from None


def family_prompt(spec: DomainSpec, tools: list[ToolSchema], seed_chain: list[str], now: str, feedback: str) -> str:
    text = (f"Domain: {spec.description}\n\nTools:\n" + "\n".join(signature(t) for t in tools)
            + f"\n\nDatabase schema:\n{schema_lines(spec)}\n\n"
            f"Seed tool chain sampled from the dependency graph: {' -> '.join(seed_chain)}\n\n"
            + CONTRACT.format(now=now, example=EXAMPLE))
    return text + (f"\n\nThe previous family failed:\n{feedback}\nFix it." if feedback else "")
