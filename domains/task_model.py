"""The task file format: domains/<name>/tasks/<id>.json (JSON Schema: domains/task.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
    reward_before: float = Field(description="reward of the untouched initial state (< 1)")
    tokens: int = Field(0, description="LLM tokens (prompt + completion) spent on this task")


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
    metadata: TaskMetadata | None = None


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
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
