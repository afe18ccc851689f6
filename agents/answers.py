"""What each LLM stage must answer: the structured outputs, validated by pydantic."""

from __future__ import annotations

from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.case_format import TestCase
from domains.spec import State, Table, ToolSchema
from sandbox.guard import parse


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolEntry(_Answer):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    summary: str = Field(description="one sentence: what the tool does")


class ToolCatalog(_Answer):
    """Schema agent, first request: the domain and the names of its tools (details come in batches)."""

    description: str = Field(description="one paragraph on the domain")
    tools: list[ToolEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> ToolCatalog:
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"tool names repeat: {dupes}")
        reserved = sorted(set(names) & {"reset", "step", "state", "close"})
        if reserved:
            raise ValueError(f"{reserved} are reserved for the environment, not tools")
        return self


class ToolSchemas(_Answer):
    """Schema agent, later requests: the full schemas of a few named tools."""

    tools: list[ToolSchema] = Field(min_length=1)


class DatabaseDesign(_Answer):
    """Database agent: tables and the tool→table mapping."""

    tables: list[Table] = Field(min_length=1)
    tool_tables: dict[str, list[str]]


def _parses(code: str) -> str:
    try:
        parse(code)
    except SyntaxError as error:
        raise ValueError(f"code does not parse: line {error.lineno}: {error.msg}") from None
    return code


class ToolCode(_Answer):
    """One tool's implementation: a module of its own."""

    code: str

    _code = field_validator("code")(_parses)


class NamedToolCode(ToolCode):
    name: str


class ToolCodes(_Answer):
    """Code agent: the implementations of the few tools asked for, in the order asked."""

    tools: list[NamedToolCode] = Field(min_length=1)


def tools_named(names: list[str]) -> Callable[[ToolSchemas | ToolCodes], None]:
    """The check that a batch answer gives exactly the tools asked for, in that order (a ValueError,
    re-asked with the message)."""
    def check(answer: ToolSchemas | ToolCodes) -> None:
        got = [t.name for t in answer.tools]
        if got != names:
            raise ValueError(f"answer the tools {names} in this order, no others; got {got}")
    return check


# Shown to the model under this name (as TestCase is): renaming it would change the recorded prompts.
class TestPage(_Answer):
    """Test agent: the shared fixture (first request only) and a few cases."""

    fixture: State | None = Field(None, description="the DB state every case starts from (first request only)")
    cases: list[TestCase] = Field(min_length=1)
    done: bool = Field(description="true when the cases written so far cover the tool")

    @model_validator(mode="after")
    def _unique(self) -> TestPage:
        names = [c.name for c in self.cases]
        if len(names) != len(set(names)):
            raise ValueError("case names repeat")
        return self


class DebugFix(_Answer):
    """Debug agent: a diagnosis and a fix to the code, or corrected cases (replacing those of the same name)."""

    diagnosis: str
    fix: Literal["code", "tests"]
    code: str | None = None
    cases: list[TestCase] | None = Field(None, description="corrected or added cases, against the fixture")
    fixture: State | None = Field(None, description="a corrected fixture, only when the fixture itself is wrong")

    @model_validator(mode="after")
    def _has_fix(self) -> DebugFix:
        if self.fix == "code":
            if not self.code:
                raise ValueError("fix 'code' needs the corrected code")
            _parses(self.code)
        if self.fix == "tests" and not (self.cases or self.fixture):
            raise ValueError("fix 'tests' needs the corrected cases (or fixture)")
        return self
