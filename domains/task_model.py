"""The task file format: domains/<name>/tasks/<id>.json (JSON Schema: domains/task.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from domains.spec import State

SCHEMA_PATH = Path(__file__).with_name("task.schema.json")


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = {}


class Expansion(BaseModel):
    """One LLM-gated expansion round (ScaleEnv 4.2.2): the gate's inputs, its answer and what joined."""

    model_config = ConfigDict(extra="forbid")

    remaining_tools: int = Field(description="|D_n|: tools outside the subgraph before the round")
    complexity: float = Field(description="c(H_n) = (|V| + 0.5 |E|) / 50 before the round")
    feasibility: float = Field(description="g(D_n): the oracle's success rate on chains inside D_n")
    p: float = Field(description="the gate's compatibility score; the chain joins when p >= tau")
    tau: float
    chain: list[str] = Field(description="the chain proposed for this round (joined only when p >= tau)")
    joined: bool


class TaskMetadata(BaseModel):
    """How a task was made: its chains, the subgraph they grew into, and the checks it passed."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    complexity_level: int = Field(ge=1, le=3, description="1 simple .. 3 complex; sets the distractor density")
    seed_chain: list[str] = Field(description="C1 as sampled from the tool graph")
    chain: list[str] = Field(description="the tools the executed chain program called, in order")
    chains: list[list[str]] = Field(description="C1 and every chain that joined the subgraph")
    subgraph_nodes: list[str] = Field(description="the tools of H = union of K(C_i)")
    subgraph_edges: list[list[str]] = Field(description="dependency edges of the tool graph inside H")
    complexity: float = Field(description="c(H) = (|V| + 0.5 |E|) / 50 of the final subgraph")
    feasibility: float = Field(description="g(D) of the last gate round")
    # Absent for the executed search, so that tasks built without a model keep their bytes.
    feasibility_source: str | None = Field(
        None, description="the oracle behind g(D): the model of the LLM oracle agent (best-of-k attempts at an "
                          "executable chain among D's tools); absent when it was the executed search (no model)")
    p: float = Field(description="the last gate answer")
    expansions: list[Expansion] = []
    auxiliary_chains: list[list[str]] = Field([], description="chains added to reach the minimum subgraph size")
    probes: dict[str, str] = Field({}, description="tool → outcome of executing it on the initial state")
    distractor_rows: int
    distractors_rejected: int = 0
    # Absent for tasks made before the domain's vocabulary, so that they keep their bytes.
    lookalike_rows: int | None = Field(
        None, description="distractor rows that share a name or title with one of the task's own rows")
    repairs: list[str] = Field([], description="what failed and was fed back before the task verified")
    reward_before: float = Field(description="reward of the untouched initial state (< 1); on a refusal task, "
                                             "of an episode that made the forbidden call (< 1)")
    tokens: int = Field(0, description="LLM tokens (prompt + completion) spent on this task; for an instance of a "
                                       "family, the family's tokens shared among its verified instances")
    # Absent for tasks built one by one, so that they keep their bytes.
    family: str | None = Field(None, description="the task family whose generator drew this instance")
    instance_seed: int | None = Field(None, description="the seed the family's generator drew this instance with")
    # Absent unless an eval run calibrated the levels (tasks/calibrate.py), so that other tasks keep their bytes.
    solve_rate: float | None = Field(None, description="the share of a model's eval trials that solved the task, "
                                                       "when its level was calibrated by it")
    structural_level: int | None = Field(None, ge=1, le=3, description="the level the task's structure gave, when "
                                                                       "calibration re-levelled it")


TaskKind = Literal["change", "answer", "refusal"]
FactType = Literal["number", "date", "datetime", "text"]


class Fact(BaseModel):
    """One value an answer task's user asked for, read from an executed output of the reference calls."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="what the user asked for, in words (e.g. 'status', 'base salary')")
    value: str | int | float = Field(description="the value the agent's final message must state")
    type: FactType = Field(description="how it is compared: numbers as numbers, dates as dates, text normalised")
    source: str = Field(description="where it was read: '<step>.<tool>: <path in the output>'")


RefusalRule = Literal["status_table", "closed_record", "precondition"]


class PolicyRule(BaseModel):
    """What a refusal task's user asks for and the domain policy forbids: the rule, and the call
    that would break it (made or attempted, it costs reward)."""

    model_config = ConfigDict(extra="forbid")

    kind: RefusalRule = Field(description="status_table: a move outside the status table; closed_record: an action "
                                          "on a closed record; precondition: a precondition that cannot hold")
    rule: str = Field(description="the rule as the policy states it")
    tool: str
    error: str | None = Field(None, description="the error the tool answers the forbidden call with")
    forbidden: ToolCall = Field(description="the call the user asks for")
    match: list[str] = Field(description="the arguments naming the record: any call of `tool` with these equal "
                                         "to the forbidden call's is the forbidden move")


def _is_change(kind: str) -> bool:
    return kind == "change"


class Task(BaseModel):
    """A verifiable task: executing `reference_solution` on `initial_state` gives the ground truth
    that an episode's final state is rewarded against, under `reward_spec`'s field policies.
    Fields a reader does not use are kept."""

    model_config = ConfigDict(extra="allow")

    id: str
    instruction: str = ""
    user_profile: Any = None
    initial_state: State = {}
    reference_solution: list[ToolCall] = []
    reward_spec: dict[str, Any] | None = None
    now: str | None = None  # the episode clock; the DB layer's default when absent
    mode: Literal["single_turn", "conversational"] | None = Field(
        None, description="conversational: an argument of the reference solution is held only by the user profile, "
                          "so the agent must ask the user (tasks/mode.py); absent: not checked")
    # "change" is not written, so that the task files made before there were kinds keep their bytes.
    kind: TaskKind = Field("change", exclude_if=_is_change,
                           description="change: the reference solution changes the database; answer: the user asks "
                                       "for information (reads only; the final message must state every fact); "
                                       "refusal: the user asks for what the policy forbids (the right outcome is "
                                       "no change and no forbidden call)")
    facts: list[Fact] | None = Field(None, description="answer tasks: what the final message must state")
    policy_rule: PolicyRule | None = Field(None, description="refusal tasks: the rule and the forbidden call")
    metadata: TaskMetadata | None = None

    @model_validator(mode="after")
    def _kind_has_its_fields(self) -> Task:
        if self.kind == "answer" and not self.facts:
            raise ValueError("an answer task needs facts")
        if self.kind == "refusal" and self.policy_rule is None:
            raise ValueError("a refusal task needs its policy_rule")
        if self.kind != "answer" and self.facts:
            raise ValueError(f"facts belong to answer tasks, not to a {self.kind} task")
        if self.kind != "refusal" and self.policy_rule is not None:
            raise ValueError(f"a policy_rule belongs to refusal tasks, not to a {self.kind} task")
        return self


INDEX_FILE = "index.json"  # the task stage's summary beside the task files, not a task


def task_ids(domain_dir: Path) -> list[str]:
    """The ids of a domain's task files (domains/<name>/tasks/<id>.json), sorted."""
    folder = Path(domain_dir) / "tasks"
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if p.name != INDEX_FILE)


def json_schema() -> str:
    """The published JSON Schema of a task file, as written to domains/task.schema.json."""
    schema = Task.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "worldsmith task"
    # The runtime reads partial tasks; a published task file carries every field.
    schema["required"] = ["id", "instruction", "user_profile", "initial_state", "reference_solution",
                          "reward_spec", "metadata"]
    # What each kind needs beyond the common fields (the model's validator says the same).
    schema["allOf"] = [
        {"if": {"properties": {"kind": {"const": "answer"}}, "required": ["kind"]},
         "then": {"required": ["facts"], "properties": {"facts": {"type": "array", "minItems": 1}}}},
        {"if": {"properties": {"kind": {"const": "refusal"}}, "required": ["kind"]},
         "then": {"required": ["policy_rule"], "properties": {"policy_rule": {"type": "object"}}}},
    ]
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
