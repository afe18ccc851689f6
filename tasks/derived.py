"""What answer and refusal tasks share: the record a call names, the reads that look a record up,
the metadata of a task derived from a verified one, and where a verified task's records are."""

from __future__ import annotations

from typing import Any

from domains.spec import DBSchema, DomainSpec, State
from domains.task_model import Task, TaskMetadata, ToolCall
from mcp_servers.runtime import Environment


def named_record(schema: DBSchema, state: State, arguments: dict[str, Any]) -> tuple[str, dict, list[str]] | None:
    """The state's row whose primary key an argument holds (argument name = key column), with its
    table and the arguments naming it; None when no argument names a row."""
    for table in schema.tables:
        pk = table.primary_key.name
        if pk in arguments:
            row = next((r for r in state.get(table.name, []) if r.get(pk) == arguments[pk]), None)
            if row is not None:
                return table.name, row, [pk]
    return None


def lookups(env: Environment, spec: DomainSpec, table: str) -> list[str]:
    """The served read tools that take one of `table`'s rows by its key and nothing else required."""
    pk = spec.db.table(table).primary_key.name
    return [name for name, tool in sorted(env.tools.items())
            if not tool.mutates and [p.name for p in tool.parameters if p.required] == [pk]]


def records(spec: DomainSpec, task: Task) -> list[tuple[str, dict]]:
    """The initial-state rows a verified task's reference solution names by key, in call order."""
    seen, out = set(), []
    for call in task.reference_solution:
        found = named_record(spec.db, task.initial_state, call.arguments)
        if found and (found[0], id(found[1])) not in seen:
            seen.add((found[0], id(found[1])))
            out.append(found[:2])
    return out


def metadata(base: TaskMetadata | None, seed: int, level: int, calls: list[ToolCall], reward_before: float,
             repairs: list[str] | None = None) -> TaskMetadata:
    """A derived task's metadata: its own chain and checks; the subgraph, expansions, probes and
    distractors of the verified task whose state it reuses."""
    chain = [call.tool for call in calls]
    inherited = base.model_dump(include={"subgraph_nodes", "subgraph_edges", "complexity", "feasibility",
                                         "feasibility_source", "p", "expansions", "auxiliary_chains", "probes",
                                         "distractor_rows", "distractors_rejected", "family"}) if base else {
        "subgraph_nodes": sorted(set(chain)), "subgraph_edges": [], "complexity": len(set(chain)) / 50,
        "feasibility": 0.0, "p": 0.0, "distractor_rows": 0}
    return TaskMetadata(seed=seed, complexity_level=level, seed_chain=chain, chain=chain, chains=[chain],
                        reward_before=round(reward_before, 4), repairs=repairs or [], tokens=0, **inherited)
