"""Schema agent: a domain keyword → the domain's tool schemas."""

from __future__ import annotations

from agents.answers import ToolSchemas
from agents.llm import LLM, StepKey
from agents.prompts import SCHEMA_SYSTEM


def propose_tools(llm: LLM, domain: str) -> ToolSchemas:
    keyword = domain.replace("_", " ")
    prompt = (
        f"Domain: {keyword}\n\nDefine 30 to 50 atomic tools for the {keyword} domain, reads and writes mixed, "
        "so that realistic multi-step tasks can be composed from them: listers and searches that return "
        "record identifiers, creators that return the new identifier, updates and deletions."
    )
    return llm.structured(StepKey("schema"), SCHEMA_SYSTEM, prompt, ToolSchemas)
