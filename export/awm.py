"""Agent World Model (AWM-1K layout) JSONL files, one scenario per task.

    gen_scenario.jsonl              {"name", "description"}
    gen_tasks.jsonl                 {"scenario", "tasks": [instruction]}
    gen_db.jsonl                    {"scenario", "db_schema": {"tables": [{"name", "ddl", "indexes"}]}}
    gen_sample.jsonl                {"scenario", "sample_data": {"tables": [{"table_name", "insert_statements"}]}}
    gen_verifier.pure_code.jsonl    {"scenario", "task_idx", "verification": {"code", ...}}  (code mode)
    gen_verifier.jsonl              the same entries, for readers that ask for the sql mode

AWM keys a database by scenario and gives each scenario several tasks; a worldsmith task has its
own starting database, so each task is a scenario ("<domain>_<task id>") with one task whose
sample rows are the task's initial state. The verifier (awm_verifier.py) carries the changes the
reference solution makes, computed by running it in the domain's confined runtime; an answer
task's verifier also checks its facts in the final answer (awm_answer.py). A refusal task's
verifier checks that nothing changed: a call the tool refused leaves no trace in the database, so
the forbidden call itself is checked by worldsmith's reward only. AWM's
gen_envs.jsonl (a generated FastAPI server per scenario) is not written: worldsmith's tools run
only inside its confined episode processes, served by `python -m mcp_servers NAME --transport http`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from domains.db_layer import _checks as column_checks
from domains.db_layer import table_order
from domains.spec import DBSchema, State
from export.files import write_jsonl
from export.source import DomainSource, ExportError
from mcp_servers.runtime import Environment, RewardUnavailable

_SQL_TYPE = {"string": "TEXT", "text": "TEXT", "date": "TEXT", "datetime": "TEXT", "integer": "INTEGER",
             "number": "REAL", "boolean": "INTEGER"}
VERIFIER = Path(__file__).with_name("awm_verifier.py")
ANSWER = Path(__file__).with_name("awm_answer.py")  # appended for answer tasks


def scenario_name(source: DomainSource, task_id: str) -> str:
    """AWM's normalised scenario key: lower case, [a-z0-9_]."""
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9_]", "_", f"{source.name}_{task_id}".lower())).strip("_")


def literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    return "'" + value.replace("'", "''") + "'"


def ddl(schema: DBSchema) -> list[dict]:
    """CREATE TABLE statements (SQLite), referenced tables first."""
    tables = []
    for name in table_order(schema):
        table = schema.table(name)
        lines = []
        for col in table.columns:
            parts = [f'"{col.name}"', _SQL_TYPE[col.type]]
            if col.primary_key:
                parts.append("PRIMARY KEY")
            if not col.nullable and not col.primary_key:
                parts.append("NOT NULL")
            if col.unique:
                parts.append("UNIQUE")
            if col.default is not None:
                parts.append("DEFAULT " + literal(col.default))
            if col.foreign_key:
                ref_table, ref_col = col.foreign_key.split(".", 1)
                parts.append(f'REFERENCES "{ref_table}"("{ref_col}")')
            lines.append("  " + " ".join(parts))
        lines += [f"  CHECK ({check})" for check in column_checks(table)]
        tables.append({"name": name, "ddl": f'CREATE TABLE "{name}" (\n' + ",\n".join(lines) + "\n)", "indexes": []})
    return tables


def inserts(schema: DBSchema, state: State) -> list[dict]:
    out = []
    for name in table_order(schema):
        columns = [c.name for c in schema.table(name).columns]
        into = f'INSERT INTO "{name}" (' + ", ".join(f'"{c}"' for c in columns) + ") VALUES "
        statements = [into + "(" + ", ".join(literal(row.get(c)) for c in columns) + ")" for row in state.get(name, [])]
        out.append({"table_name": name, "insert_statements": statements})
    return out


def expected_changes(schema: DBSchema, initial: State, expected: State, reward_spec: dict | None) -> dict:
    """What the reference solution changes, per table, with the task's column policies."""
    fields = (reward_spec or {}).get("fields", {})
    tables = {}
    for name in table_order(schema):
        table = schema.table(name)
        pk = table.primary_key.name
        before = {row[pk]: row for row in initial.get(name, [])}
        after = {row[pk]: row for row in expected.get(name, [])}
        policies = {c.name: fields.get(name, {}).get(c.name, "hard") for c in table.columns}
        updated = {}
        for key in sorted(set(before) & set(after)):
            changed = {c: v for c, v in after[key].items() if policies.get(c) != "exempt" and before[key].get(c) != v}
            if changed:
                updated[key] = changed
        tables[name] = {
            "pk": pk, "columns": policies,
            "refs": {c.name: c.foreign_key.split(".")[0] for c in table.columns if c.foreign_key},
            "inserted": [after[key] for key in after if key not in before],
            "updated": updated, "deleted": sorted(set(before) - set(after)),
        }
    return {"tables": tables}


def _code(path: Path) -> str:
    body = path.read_text()
    return body[body.index('"""', 3) + 3:]  # without the module docstring


def verifier_code(changes: dict) -> str:
    """The verifier's source; with `facts` in `changes` (an answer task), also the facts' check."""
    header = "import json\n\nEXPECTED = json.loads(" + repr(json.dumps(changes, ensure_ascii=False, sort_keys=True)) + ")\n"
    return header + _code(VERIFIER) + (_code(ANSWER) if "facts" in changes else "")


def export(source: DomainSource, out: Path, env: Environment | None = None, **_options) -> list[Path]:
    schema = source.spec.db
    scenarios, tasks, dbs, samples, verifiers = [], [], [], [], []
    own = env is None
    env = env or Environment(source.dir)
    try:
        for task in source.tasks:
            scenario = scenario_name(source, task.id)
            initial = source.full_state(task.initial_state)
            try:
                expected = env.expected_state(task.id)
            except RewardUnavailable as error:
                raise ExportError(str(error)) from None
            scenarios.append({"name": scenario, "description": f"{source.spec.description} ({task.id})"})
            tasks.append({"scenario": scenario, "tasks": [task.instruction]})
            dbs.append({"scenario": scenario, "db_schema": {"tables": ddl(schema)}})
            samples.append({"scenario": scenario, "sample_data": {"tables": inserts(schema, initial)}})
            changes = expected_changes(schema, initial, expected, task.reward_spec)
            if task.kind == "answer":
                changes["facts"] = [{"value": f.value, "type": f.type} for f in task.facts]
            verifiers.append({"scenario": scenario, "task_idx": 0, "task": task.instruction,
                              "verification": {
                                  "code": verifier_code(changes),
                                  "reasoning": "Compares the final database with the state the task's reference "
                                               "solution leaves, change by change.",
                                  "success_criteria": "Every change the reference solution makes is present and "
                                                      "nothing else changed (generated ids and timestamps aside).",
                                  "failure_criteria": "A change is missing or differs, or another row changed."}})
    finally:
        if own:
            env.close()
    return [write_jsonl(out / "gen_scenario.jsonl", scenarios), write_jsonl(out / "gen_tasks.jsonl", tasks),
            write_jsonl(out / "gen_db.jsonl", dbs), write_jsonl(out / "gen_sample.jsonl", samples),
            write_jsonl(out / "gen_verifier.pure_code.jsonl", verifiers),
            write_jsonl(out / "gen_verifier.jsonl", verifiers)]
