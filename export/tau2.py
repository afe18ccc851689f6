"""A tau2-bench domain folder: tasks.json, policy.md, db.json (and tools.json, the tool schemas).

db.json is the domain's sample state as {table: [rows]}. Each task carries its own starting
database as `initial_state.initialization_data.agent_data`; tau2 merges that dict into the DB
and lists replace lists, so every table of the task's state replaces the sample's. The
evaluation criteria are the reference solution as gold actions with reward basis DB: tau2
replays them on a fresh environment and compares databases, as worldsmith's reward compares the
final state with the reference run's; an answer task's facts are its communicate_info (reward
basis DB and COMMUNICATE), a refusal task's rule its relevant_policies. Tools stay in worldsmith
(serve them over MCP); tau2's Python toolkit classes are not generated.
"""

from __future__ import annotations

from pathlib import Path

from export.files import write_json
from export.source import DomainSource


def policy(source: DomainSource) -> str:
    """The domain's policy.md, or one stated from its verified tool contracts when it has none."""
    if source.policy.strip():
        return source.policy
    lines = [f"# {source.name} agent policy", "", source.spec.description.strip(), "",
             "Act only through the tools. Look records up instead of asking the user for internal "
             "identifiers, do only what the user asks, and ask when a detail is missing.", "",
             "## Rules the tools enforce", ""]
    served = {tool["function"]["name"] for tool in source.tools}
    for tool in source.spec.tools:
        if tool.name not in served:
            continue
        rules = tool.preconditions + [f"{r.error} when {r.when}" for r in tool.raises]
        if rules:
            lines.append(f"- `{tool.name}`: " + "; ".join(rules))
    return "\n".join(lines).rstrip() + "\n"


def _profile_text(profile, key: str) -> str | None:
    if not isinstance(profile, dict) or profile.get(key) in (None, "", []):
        return None
    value = profile[key]
    return "\n".join(map(str, value)) if isinstance(value, list) else str(value)


def _criteria(t) -> tuple[list[str], list[str], str | None]:
    """communicate_info, reward_basis and relevant_policies by kind: an answer task's facts are what
    the agent must communicate; a refusal task names its rule (tau2 checks that the DB is unchanged;
    the forbidden call itself is checked by worldsmith's reward only)."""
    if t.kind == "answer":
        return [str(f.value) for f in t.facts], ["DB", "COMMUNICATE"], None
    if t.kind == "refusal":
        return [], ["DB"], t.policy_rule.rule
    return [], ["DB"], None


def task(source: DomainSource, t) -> dict:
    profile = t.user_profile if isinstance(t.user_profile, dict) else {}
    communicate, basis, rule = _criteria(t)
    known = [f"You are {profile['name']}." if profile.get("name") else None,
             f"Your email is {profile['email']}." if profile.get("email") else None,
             _profile_text(profile, "known_info")]
    return {
        "id": t.id,
        "description": {"purpose": f"worldsmith {source.name} task"
                                   + (f" (complexity level {t.metadata.complexity_level})" if t.metadata else ""),
                        "relevant_policies": rule, "notes": None},
        "user_scenario": {
            "persona": _profile_text(profile, "persona") or (t.user_profile if isinstance(t.user_profile, str) else None),
            "instructions": {
                "domain": source.name,
                "reason_for_call": t.instruction,
                "known_info": "\n".join(k for k in known if k) or None,
                "unknown_info": _profile_text(profile, "unknown_info"),
                "task_instructions": "Ask the agent to do what the reason for the call says, give the details "
                                     "you know when asked, and end the conversation once it is done.",
            },
        },
        "ticket": t.instruction,
        "initial_state": {"initialization_data": {"agent_data": source.full_state(t.initial_state), "user_data": None},
                          "initialization_actions": None, "message_history": None},
        "evaluation_criteria": {
            "actions": [{"action_id": f"{t.id}_{i}", "requestor": "assistant", "name": call.tool,
                         "arguments": call.arguments, "info": None, "compare_args": None}
                        for i, call in enumerate(t.reference_solution)],
            "env_assertions": None, "communicate_info": communicate, "nl_assertions": None, "reward_basis": basis,
        },
    }


def export(source: DomainSource, out: Path, **_options) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "policy.md").write_text(policy(source))
    return [write_json(out / "tasks.json", [task(source, t) for t in source.tasks]), out / "policy.md",
            write_json(out / "db.json", source.full_state(source.sample_state)),
            write_json(out / "tools.json", source.tools)]
