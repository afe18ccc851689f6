"""Hand-made job_seeking tasks in a copy of the domain, for the rollout tests.

Each starts from the domain's sample state; the runtime computes the expected state by
running the reference solution. WITHDRAW scripts an agent and a user through one of them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rollouts import STOP

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = ROOT / "domains" / "job_seeking"


def _pending_offer(company: str) -> str:
    """The sample state's pending offer from `company` (its key follows how the sample state was merged)."""
    state = json.loads((DOMAIN / "sample_state.json").read_text())
    applications = {a["application_id"] for a in state["job_application"] if a["company_name"] == company}
    return next(o["offer_id"] for o in state["job_offer"]
                if o["application_id"] in applications and o["offer_status"] == "pending")


TASKS = {
    "withdraw_figma_infra": {
        "instruction": "You are Maya Chen. You want to withdraw your application for the Software Engineer, "
                       "Infrastructure role at Figma.",
        "user_profile": {"name": "Maya Chen", "email": "maya.chen@example.com"},
        "reference_solution": [{"tool": "withdraw_application", "arguments": {"application_id": "APP-0010"}}],
    },
    "decline_cloudflare_offer": {
        "instruction": "You are Maya Chen. Decline the offer you received from Cloudflare.",
        "user_profile": {"name": "Maya Chen"},
        "reference_solution": [{"tool": "respond_to_offer",
                                "arguments": {"offer_id": _pending_offer("Cloudflare"), "decision": "decline"}}],
    },
    "shopify_follow_up": {
        "instruction": "You are Maya Chen. For your Shopify Platform Engineer application: add a follow-up note "
                       "'Email the recruiter on March 10' and raise its priority to 5.",
        "user_profile": {"name": "Maya Chen"},
        "reference_solution": [
            {"tool": "add_application_note", "arguments": {"application_id": "APP-0003",
                                                           "note_content": "Email the recruiter on March 10",
                                                           "note_type": "follow_up"}},
            {"tool": "set_application_priority", "arguments": {"application_id": "APP-0003", "priority_level": 5}},
        ],
    },
}


# A scripted agent and user playing withdraw_figma_infra: the agent looks the application up, then
# withdraws it.
WITHDRAW = {
    "user/withdraw_figma_infra@0/0": {"message": "Hi, please withdraw my application for the Software Engineer, "
                                                 "Infrastructure role at Figma."},
    "agent/withdraw_figma_infra@0/0": {"tool_calls": [{"name": "list_applications",
                                                       "arguments": {"company_name": "Figma"}}]},
    "agent/withdraw_figma_infra@0/1": {"tool_calls": [{"name": "withdraw_application",
                                                       "arguments": {"application_id": "APP-0010"}}]},
    "agent/withdraw_figma_infra@0/2": {"content": "Done: your Figma infrastructure application is withdrawn."},
    "user/withdraw_figma_infra@0/1": {"message": STOP},
}


def write_domain(out: Path, tasks: dict = TASKS) -> Path:
    """A copy of job_seeking with `tasks` as its task files."""
    domain = out / "job_seeking"
    shutil.copytree(DOMAIN, domain, ignore=shutil.ignore_patterns("tasks", "rollouts", "tests", "__pycache__",
                                                                   ".embeddings", ".checkpoints*"))
    state = json.loads((DOMAIN / "sample_state.json").read_text())
    (domain / "tasks").mkdir()
    for task_id, task in tasks.items():
        body = {"id": task_id, "initial_state": state, "reward_spec": None, **task}
        (domain / "tasks" / f"{task_id}.json").write_text(json.dumps(body, indent=1))
    return domain


# A task marked conversational for the simulated user's tests, and the control token their
# in-process apps are built with.
CONVERSATIONAL = "withdraw_figma_infra"
CONTROL_TOKEN = "test-control-token-0123456789"
