"""The domain artifact's data model: tool schemas, DB schema, tool→table mapping, procedural tests.

Every stage reads and writes these models; `spec.json` and `tests/*.json` are their JSON form.
"""

from __future__ import annotations

import keyword
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from domains.db_runtime import DEFAULT_NOW, ErrorName
from domains.policy import Policy, requirements

IDENT = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
IDENT_HELP = "use a snake_case identifier: a lowercase letter, then lowercase letters, digits or underscores"

ParamType = Literal["string", "integer", "number", "boolean", "array", "object"]
ColumnType = Literal["string", "text", "integer", "number", "boolean", "date", "datetime"]


def valid_name(name: str) -> bool:
    """Domain names become folder names: plain identifiers only, so nothing escapes domains/."""
    return bool(IDENT.fullmatch(name or ""))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _ident(value: str) -> str:
    if not IDENT.match(value):
        raise ValueError(f"{value!r} is not a snake_case identifier")
    if keyword.iskeyword(value):  # a parameter or column becomes a Python name in the generated code
        raise ValueError(f"{value!r} is a Python keyword; name it otherwise (e.g. {value}_name)")
    return value


class Param(_Model):
    """One input parameter of a tool."""

    name: str
    type: ParamType
    description: str
    required: bool = True
    default: Any = None
    format: str | None = Field(None, description="e.g. 'YYYY-MM-DD', 'YYYY-MM-DDTHH:MM:SS', 'email'")
    enum: list[str] | None = None
    items: ParamType | None = Field(None, description="element type when type is 'array'")

    _name = field_validator("name")(_ident)

    @model_validator(mode="after")
    def _required_has_no_default(self) -> Param:
        if self.required and self.default is not None:
            raise ValueError(f"parameter {self.name!r} is required but declares a default")
        if self.type == "array" and self.items is None:
            raise ValueError(f"array parameter {self.name!r} must declare 'items'")
        return self


class OutputField(_Model):
    """One field of a tool's returned object; arrays of objects nest their fields."""

    name: str
    type: ParamType
    description: str = ""
    fields: list[OutputField] | None = None

    _name = field_validator("name")(_ident)


class Raises(_Model):
    error: ErrorName
    when: str


class ToolSchema(_Model):
    """A tool's interface: what the schema agent writes and what the agent will see."""

    name: str
    description: str
    parameters: list[Param] = []
    output: list[OutputField]
    preconditions: list[str] = []
    postconditions: list[str] = []
    raises: list[Raises] = []
    mutates: bool = Field(description="True when the tool writes to the database")
    destructive: bool = Field(False, description="True when the tool deletes or overwrites data")

    _name = field_validator("name")(_ident)

    @model_validator(mode="after")
    def _unique_params(self) -> ToolSchema:
        names = [p.name for p in self.parameters]
        if len(names) != len(set(names)):
            raise ValueError(f"tool {self.name!r} repeats a parameter name")
        if self.name in {"reset", "step", "state", "close"}:
            raise ValueError(f"{self.name!r} is reserved for the environment, not a tool")
        return self


class Column(_Model):
    name: str
    type: ColumnType
    description: str = ""
    primary_key: bool = False
    nullable: bool = True
    default: Any = None
    unique: bool = False
    foreign_key: str | None = Field(None, description="'table.column'")
    max_length: int | None = None
    choices: list[str] | None = None
    minimum: float | None = None
    maximum: float | None = None

    _name = field_validator("name")(_ident)


class Table(_Model):
    name: str
    description: str = ""
    columns: list[Column]
    id_prefix: str = Field(description="prefix of generated primary keys, e.g. 'APP' gives 'APP-0001'")

    _name = field_validator("name")(_ident)

    @property
    def primary_key(self) -> Column:
        return next(c for c in self.columns if c.primary_key)

    @model_validator(mode="after")
    def _one_string_pk(self) -> Table:
        pks = [c for c in self.columns if c.primary_key]
        if len(pks) != 1:
            raise ValueError(f"table {self.name!r} needs exactly one primary key column")
        if pks[0].type != "string":
            raise ValueError(f"table {self.name!r}: primary keys are generated strings")
        names = [c.name for c in self.columns]
        if len(names) != len(set(names)):
            raise ValueError(f"table {self.name!r} repeats a column name")
        return self


class DBSchema(_Model):
    tables: list[Table]

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    @model_validator(mode="after")
    def _foreign_keys_resolve(self) -> DBSchema:
        cols = {(t.name, c.name) for t in self.tables for c in t.columns}
        for t in self.tables:
            for c in t.columns:
                if c.foreign_key:
                    target = tuple(c.foreign_key.split(".", 1))
                    if target not in cols:
                        raise ValueError(f"{t.name}.{c.name} references unknown column {c.foreign_key!r}")
        return self


class DomainSpec(_Model):
    """spec.json: everything the schema and database agents decided."""

    name: str
    description: str
    tools: list[ToolSchema]
    db: DBSchema
    tool_tables: dict[str, list[str]] = Field(description="tool name → tables it reads or writes")
    policy: Policy = Field(Policy(), description="the domain's rules (domains/policy.py); empty in older specs")

    def tool(self, name: str) -> ToolSchema:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(name)

    def requirements(self, tool: str) -> list[str]:
        """The preconditions a tool's served description ends with ("Requires: ...")."""
        return requirements(self.policy, self.tool(tool))

    def tables_of(self, tool: str) -> list[str]:
        """The tables a tool reads or writes and those they reference, in the schema's order."""
        return self.with_references(*self.tool_tables.get(tool, []))

    def with_references(self, *tables: str) -> list[str]:
        """The given tables and those they reference, in the schema's order."""
        wanted = set(tables)
        todo = list(wanted)
        while todo:
            for column in self.db.table(todo.pop()).columns:
                target = column.foreign_key.split(".")[0] if column.foreign_key else None
                if target and target not in wanted:
                    wanted.add(target)
                    todo.append(target)
        return [t.name for t in self.db.tables if t.name in wanted]


# A DB state: table name → list of rows (column → JSON value). Dates are ISO strings.
State = dict[str, list[dict[str, Any]]]


class TableChanges(_Model):
    """How one table changed: full inserted rows, updated columns per primary key, deleted keys."""

    inserted: list[dict[str, Any]] = []
    updated: dict[str, dict[str, Any]] = {}
    deleted: list[str] = []


Changes = dict[str, TableChanges]


class ToolTest(_Model):
    """A procedural test: a matched DB instance, one call, and its expected outcome.

    success:   no exception, the return value equals `expect_return` and the state
               transition equals `expect_changes` exactly (tables not listed are unchanged).
    rejection: the tool raises `expect_error` and the state is unchanged.
    """

    name: str
    kind: Literal["success", "rejection"]
    initial_state: State = {}
    arguments: dict[str, Any] = {}
    expect_return: Any = None
    expect_changes: Changes = {}
    expect_error: ErrorName | None = None
    now: str = Field(DEFAULT_NOW, description="the episode clock seen by the tool")

    _name = field_validator("name")(_ident)

    @model_validator(mode="after")
    def _consistent(self) -> ToolTest:
        if self.kind == "rejection" and (self.expect_error is None or self.expect_changes):
            raise ValueError(f"rejection test {self.name!r} needs expect_error and no expect_changes")
        if self.kind == "success" and self.expect_error is not None:
            raise ValueError(f"success test {self.name!r} cannot expect an error")
        return self
