"""What prompts show of answer schemas and tool schemas: shorter than their JSON, with nothing lost
that a model needs to answer validly."""

from __future__ import annotations

import json
from pathlib import Path

from agents.answers import DatabaseDesign, ToolSchemas
from agents.answers import TestPage as CasePage  # aliased: a Test* name would be collected
from agents.views import describe_tool
from domains.policy import Policy
from domains.spec import DomainSpec
from llm import count_tokens, schema_text

JOB_SEEKING = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"


def test_an_answer_type_names_every_field_its_requiredness_values_and_constraints():
    text = schema_text(CasePage)
    assert text.startswith("{\n  fixture?: {[key: string]: object[]} | null  // the DB state every case starts from")
    assert "  cases: TestCase[]  // at least 1\n" in text and "  done: boolean  //" in text
    assert '  kind: "success" | "rejection"\n' in text
    assert '  expect_error?: "NotFound" | "InvalidInput" | "Conflict" | "PreconditionFailed" | null\n' in text
    assert "  name: string  // pattern ^[a-z][a-z0-9_]{0,63}$\n" in text
    assert "TableChanges = {\n" in text
    policy = schema_text(Policy)
    assert '  clock?: Clock  // default {"tools": []}' in policy and "  max?: integer | null  // >= 0" in policy
    for model in (CasePage, Policy, DatabaseDesign, ToolSchemas):
        schema = model.model_json_schema()
        for node in [schema, *schema.get("$defs", {}).values()]:
            for name in node.get("properties", {}):
                assert f"  {name}: " in schema_text(model) or f"  {name}?: " in schema_text(model), (model, name)
        assert count_tokens(schema_text(model)) < 0.7 * count_tokens(json.dumps(schema, separators=(",", ":")))


def test_a_tool_view_keeps_every_parameter_output_condition_and_error_in_fewer_tokens():
    spec = DomainSpec.model_validate_json((JOB_SEEKING / "spec.json").read_text())
    for tool in spec.tools:
        text = describe_tool(tool)
        for p in tool.parameters:
            line = next(line for line in text.splitlines() if line.startswith(f"  - {p.name}: "))
            assert ("optional" in line) is (not p.required), line
            assert all(v in line for v in p.enum or []) and (p.format or "") in line
        assert all(f"- {f.name}: " in text for f in tool.output)
        assert all(c in text for c in tool.preconditions + tool.postconditions)
        assert all(f"{r.error} when {r.when}" in text for r in tool.raises)
        assert count_tokens(text) < count_tokens(json.dumps(tool.model_dump(exclude_defaults=True)))
    batch = spec.tool("batch_update_application_status")
    assert "failed_updates: array of objects" in describe_tool(batch)
    assert "    - reason: string" in describe_tool(batch)  # nested output fields, indented under their list
    assert "Preconditions:" not in describe_tool(spec.tool("add_application_stage"), preconditions=False)
