"""The sample state: merged from procedural tests, deterministic, keys and foreign keys consistent."""

from __future__ import annotations

import json
from pathlib import Path

from domains.db_layer import table_order
from domains.spec import DBSchema, DomainSpec
from mcp_servers.sample_state import BULK, build_sample_state, merge_states
from tests.support.fixture_domain import DUNE

SCHEMA = DBSchema.model_validate({"tables": [
    {"name": "application", "id_prefix": "AP", "columns": [
        {"name": "application_id", "type": "string", "primary_key": True, "nullable": False},
        {"name": "job_id", "type": "string", "foreign_key": "job.job_id", "nullable": False},
        {"name": "parent_id", "type": "string", "foreign_key": "application.application_id"},
    ]},
    {"name": "job", "id_prefix": "JB", "columns": [
        {"name": "job_id", "type": "string", "primary_key": True, "nullable": False},
        {"name": "code", "type": "string", "unique": True},
    ]},
]})


def test_referenced_tables_come_first():
    assert table_order(SCHEMA) == ["job", "application"]


def test_first_row_wins_on_key_and_unique_collisions_and_dangling_rows_are_dropped():
    first = {"job": [{"job_id": "JB-1", "code": "A"}], "application": [{"application_id": "AP-1", "job_id": "JB-1"}]}
    second = {
        "job": [{"job_id": "JB-1", "code": "changed"},   # key taken: skipped
                {"job_id": "JB-2", "code": "A"},         # unique code taken: skipped
                {"job_id": "JB-3", "code": "C"}],
        "application": [{"application_id": "AP-2", "job_id": "JB-2"},                    # its job was skipped
                        {"application_id": "AP-3", "job_id": "JB-3", "parent_id": "AP-2"},  # cascades
                        {"application_id": "AP-4", "job_id": "JB-3", "parent_id": "AP-1"}],
    }
    merged = merge_states(SCHEMA, [first, second])
    assert merged == {
        "application": [{"application_id": "AP-1", "job_id": "JB-1"},
                        {"application_id": "AP-4", "job_id": "JB-3", "parent_id": "AP-1"}],
        "job": [{"job_id": "JB-1", "code": "A"}, {"job_id": "JB-3", "code": "C"}],
    }
    assert merge_states(SCHEMA, [first, second]) == merged  # deterministic


def test_a_table_filled_in_bulk_to_test_a_limit_is_left_out_of_that_state():
    typical = {"job": [{"job_id": "JB-1", "code": "A"}]}
    filler = {"job": [{"job_id": f"JB-{i}", "code": f"Company {i}"} for i in range(2, BULK + 3)],
              "application": [{"application_id": "AP-1", "job_id": "JB-1"}]}
    merged = merge_states(SCHEMA, [typical, filler])
    assert merged == {"application": [{"application_id": "AP-1", "job_id": "JB-1"}], "job": typical["job"]}


def _domain(tmp_path: Path, tests: dict[str, list[dict]]) -> Path:
    spec = DomainSpec(name="demo", description="d", tools=[], db=SCHEMA, tool_tables={})
    (tmp_path / "spec.json").write_text(spec.model_dump_json())
    (tmp_path / "tests").mkdir()
    for tool, cases in tests.items():
        (tmp_path / "tests" / f"{tool}.json").write_text(json.dumps(cases))
    (tmp_path / "tests" / "integrity.json").write_text("[]")
    return tmp_path


def test_only_success_tests_contribute_in_tool_name_order(tmp_path):
    job = {"job_id": "JB-1", "code": "A"}
    domain = _domain(tmp_path, {
        "zeta": [{"name": "s", "kind": "success", "initial_state": {"job": [{"job_id": "JB-1", "code": "Z"}]}}],
        "alpha": [
            {"name": "r", "kind": "rejection", "expect_error": "NotFound",
             "initial_state": {"job": [{"job_id": "JB-9", "code": "R"}]}},
            {"name": "s", "kind": "success", "initial_state": {"job": [job]}},
        ],
    })
    assert build_sample_state(domain) == {"application": [], "job": [job]}


def test_the_fixture_domain_sample_state_is_its_success_rows(fixture_domain):
    assert build_sample_state(fixture_domain) == {"book": [DUNE]}
