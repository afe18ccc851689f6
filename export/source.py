"""A built domain as every export reads it: spec, verified tools, policy, sample state and tasks.

Tasks are read through `domains.task_model.Task` (tasks/index.json is the stage's index, not a task);
tool schemas come from `domains.tool_schemas`, so an export shows the agent exactly the tools
the MCP server serves. The agent's opening prompt is the one `make eval` trajectories start with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from domains.policy import described
from domains.spec import DomainSpec, State
from domains.task_model import Task, task_ids
from domains.tool_schemas import openai_function
from mcp_servers.runtime import resolve_domain
from rollouts.agents import agent_system_prompt
from rollouts.sessions import episode_policy, read_policy
from verification.procedural import tool_sources

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


class ExportError(ValueError):
    """The domain cannot be exported; the message says what is missing or malformed."""


@dataclass(frozen=True)
class DomainSource:
    name: str
    dir: Path
    spec: DomainSpec
    tools: list[dict]  # OpenAI function schemas of the verified tools, sorted by name
    policy: str  # domains/<name>/policy.md, "" when the domain has none
    sample_state: State
    tasks: list[Task]

    @property
    def data_source(self) -> str:
        return f"worldsmith/{self.name}"

    def system_prompt(self, task: Task | None = None) -> str:
        """The agent's system message; for a task, the policy ends with its episode's date, as in
        `make eval` trajectories."""
        policy = episode_policy(self.policy, task.now) if task is not None else self.policy
        return agent_system_prompt(self.name, policy)

    def prompt(self, task: Task) -> list[dict]:
        """What the agent is shown first: the system message and the user's request, no answers."""
        return [{"role": "system", "content": self.system_prompt(task)},
                {"role": "user", "content": task.instruction}]

    def full_state(self, state: State) -> State:
        """A state with every table of the schema present (empty tables as [])."""
        return {t.name: list(state.get(t.name, [])) for t in self.spec.db.tables}


def answer_side(task: Task) -> dict:
    """What an answer or refusal task adds to the reward side: its kind, facts and policy rule;
    nothing for a change task, so change tasks export as they did before there were kinds."""
    if task.kind == "change":
        return {}
    return {"kind": task.kind, **task.model_dump(mode="json", include={"facts", "policy_rule"}, exclude_none=True)}


def read_domain(domain: str | Path) -> DomainSource:
    """The domain under domains/<name> (or at a path); raises ExportError when it is not built."""
    try:
        folder = resolve_domain(domain)
    except FileNotFoundError as error:
        raise ExportError(str(error)) from None
    try:
        spec = DomainSpec.model_validate_json((folder / "spec.json").read_text())
    except ValidationError as error:
        raise ExportError(f"{folder / 'spec.json'} is not a valid domain spec: {error}") from None
    report = folder / "report.json"
    if not report.is_file():
        raise ExportError(f"{folder} has no report.json: the domain was not verified (make domain NAME={folder.name})")
    try:
        verified = set(json.loads(report.read_text())["tools"]["verified"]) & set(tool_sources(folder))
        sample_path = folder / "sample_state.json"
        sample = json.loads(sample_path.read_text()) if sample_path.is_file() else {}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ExportError(f"{folder} is not a complete domain (report.json, tools.py, sample_state.json): "
                          f"{type(error).__name__}: {error}") from None
    tools = [openai_function(t, described(t.description, spec.requirements(t.name)))
             for t in sorted(spec.tools, key=lambda t: t.name) if t.name in verified]
    tasks = []
    for task_id in task_ids(folder):
        path = folder / "tasks" / f"{task_id}.json"
        try:
            task = Task.model_validate_json(path.read_text())
        except ValidationError as error:
            raise ExportError(f"{path} is not a valid task: {error}") from None
        if task.id != path.stem:  # the server finds a task by its file name
            raise ExportError(f"{path} holds task {task.id!r}; a task file is named for its id")
        tasks.append(task)
    if not tasks:
        raise ExportError(f"{folder} has no tasks: build them with `make tasks NAME={spec.name}`")
    return DomainSource(spec.name, folder, spec, tools, read_policy(folder), sample, tasks)
