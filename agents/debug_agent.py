"""Debug agent: failing procedural tests → a fix to the tool code or to the test instances."""

from __future__ import annotations

import json

from agents.answers import DebugFix
from agents.llm import LLM, StepKey
from agents.prompts import DEBUG_SYSTEM
from domains.spec import ToolSchema, ToolTest


def propose_fix(llm: LLM, tool: ToolSchema, code: str, tests: list[ToolTest], report: str, attempt: int) -> DebugFix:
    prompt = (
        f"Tool schema:\n{json.dumps(tool.model_dump(exclude_defaults=True), indent=1)}\n\nCode:\n{code}\n\n"
        f"Tests:\n{json.dumps([t.model_dump(exclude_defaults=True) for t in tests], indent=1)}\n\n"
        f"Failures:\n{report}"
    )
    return llm.structured(StepKey("debug", tool.name, attempt), DEBUG_SYSTEM, prompt, DebugFix)
