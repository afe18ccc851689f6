"""Schema agent: a domain keyword → the domain's tool schemas.

Asked in bounded pieces: first the tool list (names and one line each), then the full schemas
of a few tools per request. A batch whose answer is cut off at the output limit is split in
two and asked again, never repeated whole.
"""

from __future__ import annotations

import json

from agents.answers import ToolCatalog, ToolSchemas, tools_named
from agents.prompts import CATALOG_SYSTEM, SCHEMA_SYSTEM
from agents.views import tool_signature
from domains.spec import ToolSchema
from llm import LLM, AnswerTruncated, StepKey

BATCH = 8  # tools per detail request: about 3,000 output tokens at most


def propose_tools(llm: LLM, domain: str) -> tuple[str, list[ToolSchema]]:
    """The domain's description and its tool schemas, in the catalog's order."""
    keyword = domain.replace("_", " ")
    catalog = llm.structured(StepKey("schema"), CATALOG_SYSTEM, (
        f"Domain: {keyword}\n\nList 30 to 50 atomic tools for the {keyword} domain, reads and writes mixed, "
        "so that realistic multi-step tasks can be composed from them: listers and searches that return "
        "record identifiers, creators that return the new identifier, updates and deletions."), ToolCatalog)
    entries = [(t.name, t.summary) for t in catalog.tools]
    tools: list[ToolSchema] = []
    for start in range(0, len(entries), BATCH):
        tools += _details(llm, keyword, catalog.description, entries, entries[start:start + BATCH], tools)
    return catalog.description, tools


def _details(llm: LLM, keyword: str, description: str, everything: list[tuple[str, str]],
             batch: list[tuple[str, str]], written: list[ToolSchema]) -> list[ToolSchema]:
    """The schemas of `batch`. The prompt carries the signatures of the schemas `written` before it:
    a model answering each request afresh keeps their field names, shapes and status values only
    if it sees them."""
    names = [n for n, _ in batch]
    done = {t.name for t in written}
    prompt = (
        f"Domain: {keyword}. {description}\n\nThe domain's tools (for consistent names and shapes):\n"
        + "\n".join(f"- {n}: {s}" for n, s in everything if n not in done)
        + ("\n\nSchemas already written (signatures: parameters, `?` optional; returned fields; errors). "
           "Reuse their parameter and field names, shapes and status values; a tool of this request must "
           "agree with them:\n" + "\n".join(f"- {tool_signature(t)}" for t in written) if written else "")
        + f"\n\nWrite the full schemas of exactly these {len(names)} tools, in this order:\n"
        + json.dumps(dict(batch), indent=1)
    )

    try:
        return llm.structured(StepKey.batch("schema", names), SCHEMA_SYSTEM, prompt, ToolSchemas,
                              check=tools_named(names), split=len(batch) > 1).tools
    except AnswerTruncated:
        half = len(batch) // 2
        first = _details(llm, keyword, description, everything, batch[:half], written)
        return first + _details(llm, keyword, description, everything, batch[half:], written + first)
