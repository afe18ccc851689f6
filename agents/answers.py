"""What each LLM stage must answer: the structured outputs, validated by pydantic."""

from __future__ import annotations

import ast
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from domains.spec import Table, ToolSchema, ToolTest


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolSchemas(_Answer):
    """Schema agent: the domain's tools."""

    description: str = Field(description="one paragraph on the domain")
    tools: list[ToolSchema] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> ToolSchemas:
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"tool names repeat: {dupes}")
        return self


class DatabaseDesign(_Answer):
    """Database agent: tables and the tool→table mapping."""

    tables: list[Table] = Field(min_length=1)
    tool_tables: dict[str, list[str]]


def _parses(code: str) -> str:
    try:
        ast.parse(code)
    except SyntaxError as error:
        raise ValueError(f"code does not parse: line {error.lineno}: {error.msg}") from None
    return code


class ToolCode(_Answer):
    """Code agent: one tool's implementation."""

    code: str

    _code = field_validator("code")(_parses)


class ToolTests(_Answer):
    """Test agent: one tool's procedural tests."""

    tests: list[ToolTest] = Field(min_length=2)

    @model_validator(mode="after")
    def _both_kinds(self) -> ToolTests:
        kinds = {t.kind for t in self.tests}
        if kinds != {"success", "rejection"}:
            raise ValueError("write both success and rejection tests")
        names = [t.name for t in self.tests]
        if len(names) != len(set(names)):
            raise ValueError("test names repeat")
        return self


class DebugFix(_Answer):
    """Debug agent: a diagnosis and a fix to the code or to the tests."""

    diagnosis: str
    fix: Literal["code", "tests"]
    code: str | None = None
    tests: list[ToolTest] | None = None

    @model_validator(mode="after")
    def _has_fix(self) -> DebugFix:
        if self.fix == "code":
            if not self.code:
                raise ValueError("fix 'code' needs the corrected code")
            _parses(self.code)
        if self.fix == "tests" and not self.tests:
            raise ValueError("fix 'tests' needs the corrected tests")
        return self
