"""Graph-build time for job_seeking and for a synthetic 200-tool domain: `python -m bench.graph`.

Refinement answers are replayed (job_seeking: its transcript, else its authored answers;
synthetic: scripted), so the numbers measure embedding, matching, classification and
drawing, offline. Embeddings are computed cold (no cache).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from domains.spec import DomainSpec, ToolSchema
from graph.build import build_graph, write_graph
from graph.refine import chunks
from llm import LLM, ScriptedBackend, Transcript
from llm.embeddings import encoder

ROOT = Path(__file__).resolve().parent.parent
ENTITIES = [
    "account", "invoice", "payment", "customer", "supplier", "product", "warehouse", "shipment", "order", "refund",
    "ticket", "agent", "campaign", "coupon", "review", "store", "employee", "shift", "department", "project",
    "task", "milestone", "document", "folder", "contract", "vendor", "asset", "license", "device", "location",
    "event", "venue", "booking", "room", "guest", "course", "lesson", "student", "teacher", "exam",
]


def synthetic_domain(size: int = 200) -> DomainSpec:
    """size/5 entities, each with create, get, list, update and delete tools; every other entity
    belongs to the previous one, so creating it needs the parent's identifier."""
    tools, tables, tool_tables = [], [], {}
    for i, entity in enumerate(ENTITIES[: size // 5]):
        parent = ENTITIES[i - 1] if i % 2 else None
        key = f"{entity}_id"
        ref = ([{"name": f"{parent}_id", "type": "string", "description": f"Identifier of the {parent} it belongs to"}]
               if parent else [])
        fields = [{"name": key, "type": "string", "description": f"Identifier of the {entity}"},
                  {"name": "name", "type": "string", "description": f"Name of the {entity}"},
                  {"name": "status", "type": "string", "description": f"Lifecycle status of the {entity}"}]
        by_id = [{"name": key, "type": "string", "description": f"Identifier of the {entity}"}]
        tools += [
            ToolSchema(name=f"create_{entity}", description=f"Create a {entity}.", mutates=True, parameters=ref + [
                {"name": "name", "type": "string", "description": f"Name of the new {entity}"}], output=fields[:1]),
            ToolSchema(name=f"get_{entity}", description=f"Get one {entity}.", mutates=False,
                       parameters=by_id, output=fields + [{"name": f"{parent}_id", "type": "string"}] * bool(parent)),
            ToolSchema(name=f"list_{entity}s", description=f"List {entity}s, newest first.", mutates=False,
                       parameters=[{"name": "limit", "type": "integer", "description": "How many to return",
                                    "required": False, "default": 20}],
                       output=[{"name": f"{entity}s", "type": "array", "description": f"The {entity}s", "fields": fields}]),
            ToolSchema(name=f"update_{entity}", description=f"Rename a {entity}.", mutates=True, parameters=by_id + [
                {"name": "name", "type": "string", "description": f"New name of the {entity}"}], output=fields),
            ToolSchema(name=f"delete_{entity}", description=f"Delete a {entity}.", mutates=True, destructive=True,
                       parameters=by_id, output=[{"name": "deleted", "type": "boolean", "description": "Always true"}]),
        ]
        tables.append({"name": f"{entity}s", "id_prefix": entity[:3].upper(),
                       "columns": [{"name": key, "type": "string", "primary_key": True}]})
        for t in tools[-5:]:
            tool_tables[t.name] = [f"{entity}s"]
    return DomainSpec(name="synthetic", description="A synthetic back office.", tools=tools,
                      db={"tables": tables}, tool_tables=tool_tables)


def synthetic_answers(spec: DomainSpec) -> dict:
    """One scripted answer per refinement step: a state edge create → list for each list tool it decides."""
    answers = {}
    for item, names in chunks([t.name for t in spec.tools]):
        add = [{"producer": "create_" + n[len("list_"):-1], "consumer": n, "dimension": "state",
                "reason": "creating writes the rows that are listed"} for n in names if n.startswith("list_")]
        answers[f"graph/{item}/0"] = {"add": add, "prune": []}
    return answers


def timed(label: str, spec: DomainSpec, tools: list[str], llm: LLM) -> None:
    started = time.perf_counter()
    graph = build_graph(spec, tools, llm)
    built = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        numbers = write_graph(graph, Path(out))
        written = time.perf_counter() - started
    print(f"{label}: {numbers['tools']} tools, {numbers['edges']['total']} edges: "
          f"build {built:.2f}s, write {written:.2f}s")


def job_seeking_llm(folder: Path) -> LLM | None:
    transcript = Transcript(folder / "transcript.jsonl")
    if any(key.startswith("graph/") for key in transcript.entries):
        return LLM(None, transcript)
    authored = ROOT / "authoring" / "job_seeking" / "graph.json"
    if authored.exists():
        return LLM(ScriptedBackend(json.loads(authored.read_text())), Transcript(Path(tempfile.mkdtemp()) / "t.jsonl"))
    return None


def main() -> None:
    started = time.perf_counter()
    encoder()
    print(f"embedding model load: {time.perf_counter() - started:.2f}s")
    folder = ROOT / "domains" / "job_seeking"
    if (folder / "spec.json").exists():
        spec = DomainSpec.model_validate_json((folder / "spec.json").read_text())
        report = folder / "report.json"
        tools = json.loads(report.read_text())["tools"]["verified"] if report.exists() else [t.name for t in spec.tools]
        llm = job_seeking_llm(folder)
        if llm is None:
            print("job_seeking: no recorded or authored graph answers yet; skipped")
        else:
            timed("job_seeking", spec, tools, llm)
    else:
        print("job_seeking: domains/job_seeking/spec.json does not exist yet; skipped")
    spec = synthetic_domain(200)
    llm = LLM(ScriptedBackend(synthetic_answers(spec)), Transcript(Path(tempfile.mkdtemp()) / "t.jsonl"))
    timed("synthetic", spec, [t.name for t in spec.tools], llm)


if __name__ == "__main__":
    main()
