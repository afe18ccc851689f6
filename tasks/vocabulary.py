"""Realistic column values for distractor rows: one model request per domain (issue: distractors nobody would believe).

Typed fake data alone fills a medication's name with a person's ("Justin Garza") and its price
with 85,200.0. Once per domain the model names, for every free-form column, either a handful of
values a real record would hold (drug names, package sizes, a planner's note) or the fake-data
provider that fits it (a person's name, an email, a city), and a plausible range for every
number. The distractor generator (tasks.state) draws from it; what it leaves out is filled by
column name and type as before.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from domains.spec import Column, DomainSpec, Table
from llm import LLM, StepKey

# fake-data providers a column may name instead of values (Faker method names)
PROVIDERS = ("name", "first_name", "last_name", "company", "email", "phone_number", "street_address", "city",
             "state", "country", "postcode", "url", "user_name")
MIN_VALUES, MAX_VALUES = 4, 12

SYSTEM = """You give realistic values for the records of a simulated {domain} application, used to
fill look-alike records a tool-using agent must tell apart from the ones its task is about. Values
must read like real data a person or system entered: real product and drug names, plausible sizes,
amounts and durations, notes written the way a person writes them. Never lorem ipsum, never a
person's name in a column that names a thing."""

PROMPT = """Domain: {domain}. {description}

Free-form columns (table.column: type, limits, what it holds):
{texts}

For each one give either "values": {min_values} to {max_values} distinct realistic values (within the
length limit; for text columns, a short sentence or two each, varied in wording), or "provider": one of
{providers} when a generated value of that kind fits (a person's name, an email, a city).

Numeric columns (table.column: type, bounds, what it holds):
{numbers}

For each one give "range": [low, high], the values a real record would usually hold (within the bounds).
Every column above must be answered, and no other."""


class ColumnValues(BaseModel):
    model_config = ConfigDict(extra="forbid")
    values: list[str] = Field(default_factory=list, description="realistic values, or empty when a provider is named")
    provider: str | None = Field(None, description=f"one of {', '.join(PROVIDERS)}, instead of values")


class Vocabulary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    texts: dict[str, ColumnValues] = Field(description="table.column -> values or a provider")
    ranges: dict[str, list[float]] = Field(description="table.column -> [low, high]")


def text_columns(table: Table) -> list[Column]:
    """The columns whose values the schema's type alone cannot make realistic."""
    return [c for c in table.columns if c.type in ("string", "text") and not c.choices
            and not c.primary_key and not c.foreign_key]


def number_columns(table: Table) -> list[Column]:
    return [c for c in table.columns if c.type in ("integer", "number") and not c.foreign_key]


def _line(table: Table, col: Column) -> str:
    limits = [f"at most {col.max_length} chars" if col.max_length else "",
              f">= {col.minimum:g}" if col.minimum is not None else "", f"<= {col.maximum:g}" if col.maximum is not None else ""]
    described = "; ".join(x for x in [", ".join(x for x in limits if x), col.description] if x)
    return f"- {table.name}.{col.name}: {col.type}" + (f", {described}" if described else "")


def vocabulary_prompt(spec: DomainSpec) -> str:
    texts = [_line(t, c) for t in spec.db.tables for c in text_columns(t)]
    numbers = [_line(t, c) for t in spec.db.tables for c in number_columns(t)]
    return PROMPT.format(domain=spec.name.replace("_", " "), description=spec.description,
                         texts="\n".join(texts) or "(none)", numbers="\n".join(numbers) or "(none)",
                         min_values=MIN_VALUES, max_values=MAX_VALUES, providers=", ".join(PROVIDERS))


def check_vocabulary(spec: DomainSpec, answer: Vocabulary) -> None:
    """Every asked column answered within its limits, and nothing else (a ValueError, re-asked)."""
    texts = {f"{t.name}.{c.name}": c for t in spec.db.tables for c in text_columns(t)}
    numbers = {f"{t.name}.{c.name}": c for t in spec.db.tables for c in number_columns(t)}
    problems = [f"{key}: not a free-form column asked for" for key in answer.texts if key not in texts]
    problems += [f"{key}: not a numeric column asked for" for key in answer.ranges if key not in numbers]
    problems += [f"{key}: missing" for key in [*texts, *numbers] if key not in answer.texts and key not in answer.ranges]
    for key, given in answer.texts.items():
        col = texts.get(key)
        if col is None:
            continue
        if given.provider is not None:
            if given.provider not in PROVIDERS:
                problems.append(f"{key}: provider {given.provider!r} is not one of {', '.join(PROVIDERS)}")
        elif not MIN_VALUES <= len(set(given.values)) <= MAX_VALUES:
            problems.append(f"{key}: give {MIN_VALUES} to {MAX_VALUES} distinct values (or a provider)")
        elif col.max_length and (long := [v for v in given.values if len(v) > col.max_length]):
            problems.append(f"{key}: {long[0]!r} is longer than {col.max_length} characters")
    for key, pair in answer.ranges.items():
        col = numbers.get(key)
        if col is None:
            continue
        if len(pair) != 2 or pair[0] > pair[1]:
            problems.append(f"{key}: give [low, high] with low <= high")
        elif (col.minimum is not None and pair[0] < col.minimum) or (col.maximum is not None and pair[1] > col.maximum):
            problems.append(f"{key}: {pair} leaves the column's bounds [{col.minimum}, {col.maximum}]")
    if problems:
        raise ValueError("; ".join(problems[:20]))


def ask_vocabulary(llm: LLM, spec: DomainSpec) -> Vocabulary:
    return llm.structured(StepKey("tasks", "vocabulary"), SYSTEM.format(domain=spec.name.replace("_", " ")),
                          vocabulary_prompt(spec), Vocabulary, check=lambda answer: check_vocabulary(spec, answer))


def recorded_or_asked(llm: LLM, spec: DomainSpec) -> Vocabulary | None:
    """The domain's vocabulary: asked with a model, replayed when recorded, else None (the domain's
    tasks were recorded before this step; their distractors stay as they were made)."""
    if llm.replaying and str(StepKey("tasks", "vocabulary")) not in llm.transcript.entries:
        return None
    return ask_vocabulary(llm, spec)
