"""The tool-building stages, wired as a resumable LangGraph.

schema → database → [policy] → compile_db → build_tools (one per code request's group of tools,
concurrently) → assemble

Each node is a plain function over the run's state; the LLM, the sandboxes and the output
folder live in a `Run`, outside the checkpointed state. A SQLite checkpointer under the domain
folder lets an interrupted run resume: finished tools are not built again. The stages after
these (the tool graph, tasks) are run by the orchestrator, `pipeline`.
"""

from __future__ import annotations

import ast
import json
import queue
import sqlite3
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agents.case_format import expand, resolve_fixture
from agents.case_writer import write_tests
from agents.code_agent import code_groups, write_tools
from agents.database_agent import design_database
from agents.debug_agent import apply_fix, propose_fix
from agents.drift import drift_conflicts
from agents.mutation_agent import harden
from agents.mutation_agent import summarise as summarise_mutation
from agents.policy_agent import policy_report, state_policy
from agents.schema_agent import propose_tools
from domains.db_layer import compile_db, integrity_cases, integrity_json
from domains.policy import render as render_policy
from domains.spec import DomainSpec, ToolSchema, ToolTest
from llm import LLM, LLMError, MissingStep
from mcp_servers.sample_state import build_sample_state, merged_sample_state
from sandbox.guard import parse
from verification.blind_spots import blind_spots
from verification.procedural import TEST_MODULE, failure_report, run_integrity
from verification.sandbox import Sandbox


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


class State(TypedDict, total=False):
    domain: str
    description: str
    spec: dict
    db_source: str
    drift: list  # conflicts between the tools and the database the database request left
    results: Annotated[dict, _merge]
    timings: Annotated[dict, _merge]


@dataclass
class Run:
    """What a run needs besides its state: the model gateway, sandboxes and where to write."""

    domain: str
    out: Path
    llm: LLM
    concurrency: int = 2
    debug_budget: int = 3
    test_timeout: float = 2.0
    mutation_rounds: int = 0  # mutation-gate requests per verified tool (0: the gate is off)
    with_policy: bool = False  # ask for the domain's policy (policy/-/0) after the database
    _pool: queue.Queue | None = None
    _boxes: list[Sandbox] = field(default_factory=list)

    def log(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def sandbox(self, db_source: str) -> Sandbox:
        if self._pool is None:
            self._pool = queue.Queue()
            for _ in range(self.concurrency):
                box = Sandbox(db_source, timeout=self.test_timeout)
                self._boxes.append(box)
                self._pool.put(box)
        return self._pool.get()

    def release(self, box: Sandbox) -> None:
        self._pool.put(box)

    def close(self) -> None:
        for box in self._boxes:
            box.close()

    # -- nodes ---------------------------------------------------------------------------
    def schema(self, state: State) -> State:
        t = time.perf_counter()
        description, tools = propose_tools(self.llm, self.domain)
        self.log(f"schema: {len(tools)} tools proposed")
        return {"description": description, "spec": {"tools": [x.model_dump() for x in tools]},
                "timings": {"schema": time.perf_counter() - t}}

    def database(self, state: State) -> State:
        t = time.perf_counter()
        tools = [ToolSchema.model_validate(x) for x in state["spec"]["tools"]]
        db, mapping = design_database(self.llm, self.domain, tools)
        spec = DomainSpec(name=self.domain, description=state["description"], tools=tools, db=db, tool_tables=mapping)
        self.log(f"database: {len(db.tables)} tables")
        drift = drift_conflicts(tools, db, mapping)
        for conflict in drift:
            self.log(f"drift: {conflict}")
        return {"spec": spec.model_dump(), "drift": drift, "timings": {"database": time.perf_counter() - t}}

    def policy(self, state: State) -> State:
        t = time.perf_counter()
        spec = DomainSpec.model_validate(state["spec"])
        policy = state_policy(self.llm, spec)
        self.log(f"policy: {len(policy.machines)} status tables, "
                 f"{sum(len(r) for r in policy.preconditions.values())} preconditions, "
                 f"{len(policy.invariants)} invariants")
        return {"spec": spec.model_copy(update={"policy": policy}).model_dump(),
                "timings": {"policy": time.perf_counter() - t}}

    def compile_db(self, state: State) -> State:
        t = time.perf_counter()
        spec = DomainSpec.model_validate(state["spec"])
        source = compile_db(self.domain, spec.db)
        box = self.sandbox(source)
        try:
            problems = run_integrity(box, integrity_cases(spec.db))
        finally:
            self.release(box)
        if problems:
            raise RuntimeError("the compiled DB layer fails its integrity tests:\n" + "\n".join(problems))
        self.log(f"db layer: compiled, {len(integrity_cases(spec.db))} integrity cases pass")
        return {"db_source": source, "timings": {"compile_db": time.perf_counter() - t}}

    def fan_out(self, state: State) -> list[Send]:
        done = state.get("results", {})
        spec = DomainSpec.model_validate(state["spec"])
        return [Send("build_tools", {"tools": names, "spec": state["spec"], "db_source": state["db_source"]})
                for names in code_groups(spec) if any(n not in done for n in names)]

    def build_tools(self, task: dict) -> State:
        """One code request for a group of tools, then each tool's tests, sandbox and debug loop."""
        spec = DomainSpec.model_validate(task["spec"])
        started = time.perf_counter()
        out: State = {"results": {}, "timings": {}}
        try:
            codes, failed = write_tools(self.llm, spec, task["tools"]), ""
        except MissingStep:
            raise  # a replay that lacks a step stops the run; it never drops a tool
        except LLMError as error:  # the model could not answer: not a verdict on the tools
            codes, failed = {}, str(error)
        for name in task["tools"]:
            if name in codes:
                part = self.build_tool(spec, spec.tool(name), codes[name], task["db_source"])
            else:
                record = {"status": "dropped", "debug_attempts": 0, "repaired": False, "reason": failed,
                          "model_failed": True}
                part = self._finish(name, record, started, 0.0)
            out["results"].update(part["results"])
            out["timings"].update(part["timings"])
        return out

    def build_tool(self, spec: DomainSpec, tool: ToolSchema, code: str, db_source: str) -> State:
        """Tests, sandbox, the debug loop and the mutation gate for one tool and its code."""
        started = time.perf_counter()
        record = {"status": "dropped", "debug_attempts": 0, "repaired": False, "reason": ""}
        try:
            fixture, cases = write_tests(self.llm, spec, tool)
        except MissingStep:
            raise
        except LLMError as error:  # the model could not answer: not a verdict on the tool
            record.update(reason=str(error), model_failed=True)
            return self._finish(tool.name, record, started, 0.0)
        tests = expand(fixture, cases, spec.db)
        box = self.sandbox(db_source)
        test_seconds = 0.0
        try:
            for attempt in range(self.debug_budget + 1):
                t = time.perf_counter()
                outcome = box.run_source(tool.name, code, [x.model_dump() for x in tests])  # one fork
                refused, results = (outcome, []) if isinstance(outcome, str) else (None, outcome)
                test_seconds += time.perf_counter() - t
                if not refused and all(r["passed"] for r in results):
                    if self.mutation_rounds:
                        t = time.perf_counter()
                        try:
                            cases, record["mutation"] = harden(self.llm, box, spec, tool, code, fixture, cases,
                                                               self.mutation_rounds, verified=results)
                        except MissingStep:
                            raise
                        except LLMError as error:  # the tool stays verified by the tests it has
                            record["mutation"] = {"error": str(error)}
                        tests = expand(fixture, cases, spec.db)
                        test_seconds += time.perf_counter() - t
                    record.update(status="verified", repaired=attempt > 0, code=code,
                                  tests=[x.model_dump(exclude_defaults=True) for x in tests])
                    break
                report = f"the code was refused: {refused}" if refused else failure_report(results)
                record["reason"] = first_problem(refused, results)
                failed = len(results) - sum(r["passed"] for r in results) if results else "all"
                self.log(f"tool {tool.name}: attempt {attempt}: {failed} of {len(tests)} tests failed: {record['reason']}")
                if attempt == self.debug_budget:
                    break
                try:
                    failing = {r["name"] for r in results if not r["passed"]} if results else {c.name for c in cases}
                    fix = propose_fix(self.llm, spec, tool, code, fixture, cases, failing, report, attempt)
                except MissingStep:
                    raise
                except LLMError as error:
                    record.update(reason=str(error), model_failed=True)
                    break
                record["debug_attempts"] += 1
                if fix.fix == "code":
                    code = fix.code
                else:
                    fixture, cases = apply_fix(fix, fixture, cases)
                    fixture = resolve_fixture(fixture, spec.db)
                    tests = expand(fixture, cases, spec.db)
        finally:
            self.release(box)
        return self._finish(tool.name, record, started, test_seconds)

    def _finish(self, name: str, record: dict, started: float, test_seconds: float) -> State:
        note = {"verified": "verified", "dropped": "DROPPED"}[record["status"]]
        if record["repaired"]:
            note += f" after {record['debug_attempts']} debug fix(es)"
        if record["status"] == "dropped":
            note += f": {record['reason']}"
        self.log(f"tool {name}: {note}")
        return {"results": {name: record},
                "timings": {f"tool:{name}": {"total": time.perf_counter() - started, "tests": test_seconds}}}

    def assemble(self, state: State) -> State:
        spec = DomainSpec.model_validate(state["spec"])
        results = state["results"]
        verified = sorted(n for n, r in results.items() if r["status"] == "verified")
        write_domain(self.out, spec, state["db_source"], {n: results[n] for n in verified})
        # The state an MCP server starts from when no task is given.
        sample = build_sample_state(self.out)
        write_json(self.out / "sample_state.json", sample)
        report = {
            "domain": self.domain,
            "tables": len(spec.db.tables),
            "tools": {
                "proposed": [t.name for t in spec.tools],
                "verified": verified,
                "dropped": sorted(n for n, r in results.items() if r["status"] == "dropped"),
                # dropped because the model could not be reached or never answered validly,
                # not because the tool's tests failed
                "dropped_model_failed": sorted(n for n, r in results.items() if r.get("model_failed")),
            },
            "dropped_reasons": {n: r["reason"] for n, r in sorted(results.items()) if r["status"] == "dropped"},
            "debug": {
                "repaired": sorted(n for n, r in results.items() if r["repaired"]),
                "attempts": sum(r["debug_attempts"] for r in results.values()),
            },
            "procedural_tests": sum(len(results[n]["tests"]) for n in verified),
            **({"mutation": summarise_mutation({n: results[n]["mutation"] for n in verified
                                                if "mutants" in results[n].get("mutation", {})})}
               if any("mutation" in results[n] for n in verified) else {}),
            "validation_reasks": sorted(self.llm.reasks),
            **({"drift": state["drift"]} if state.get("drift") else {}),
            "tokens": self.llm.transcript.tokens(),
        }
        tests = {n: [ToolTest.model_validate(t) for t in results[n]["tests"]] for n in verified}
        report["test_blind_spots"] = blind_spots(spec, tests)
        if not spec.policy.empty():
            report["policy"] = policy_report(spec, tests, sample, merged_sample_state(self.out))
        write_json(self.out / "report.json", report)
        self.log(f"assemble: {len(verified)} verified, {len(report['tools']['dropped'])} dropped")
        return {}

    def compiled(self, checkpointer) -> object:
        builder = StateGraph(State)
        builder.add_node("schema", self.schema)
        builder.add_node("database", self.database)
        builder.add_node("compile_db", self.compile_db)
        builder.add_node("build_tools", self.build_tools)
        builder.add_node("assemble", self.assemble)
        builder.add_edge(START, "schema")
        builder.add_edge("schema", "database")
        if self.with_policy:
            builder.add_node("policy", self.policy)
            builder.add_edge("database", "policy")
            builder.add_edge("policy", "compile_db")
        else:
            builder.add_edge("database", "compile_db")
        builder.add_conditional_edges("compile_db", self.fan_out, ["build_tools"])
        builder.add_edge("build_tools", "assemble")
        builder.add_edge("assemble", END)
        return builder.compile(checkpointer=checkpointer)


def first_problem(refused: str | None, results: list[dict]) -> str:
    if refused:
        return f"the code was refused: {refused}"[:300]
    failed = next(r for r in results if not r["passed"])
    return " ".join(f"test {failed['name']}: {failed['problems'][0]}".split())[:300]  # expected and actual, on one line


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def assemble_tools(domain: str, sources: dict[str, str]) -> str:
    """tools.py: the verified tools' imports merged on top, each tool's code under a marker."""
    from_imports: dict[str, set[str]] = defaultdict(set)
    plain: set[str] = set()
    blocks = []
    for name in sorted(sources):
        tree = parse(sources[name])
        lines = sources[name].splitlines()
        body_start = len(lines)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                from_imports[node.module].update(a.name if not a.asname else f"{a.name} as {a.asname}" for a in node.names)
            elif isinstance(node, ast.Import):
                plain.update(a.name for a in node.names)
            elif not isinstance(node, ast.ImportFrom):
                body_start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
                break
        body = "\n".join(lines[body_start:]).strip("\n")
        blocks.append(f"# tool: {name}\n{body}\n")
    header = [f'"""{domain} tools: each block below was verified by its procedural tests in the sandbox.', "",
              'Generated by worldsmith; blocks are loaded one at a time, with the imports above them."""', ""]
    header += [f"import {m}" for m in sorted(plain)]
    header += [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(from_imports.items())]
    return "\n".join(header) + "\n\n\n" + "\n\n".join(blocks)


def write_domain(out: Path, spec: DomainSpec, db_source: str, verified: dict[str, dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "spec.json", spec.model_dump(exclude_defaults=True))
    (out / "db.py").write_text(db_source)
    (out / "tools.py").write_text(assemble_tools(spec.name, {n: r["code"] for n, r in verified.items()}))
    tests_dir = out / "tests"
    tests_dir.mkdir(exist_ok=True)
    for stale in tests_dir.glob("*.json"):
        stale.unlink()
    for name, record in verified.items():
        write_json(tests_dir / f"{name}.json", record["tests"])
    (tests_dir / "integrity.json").write_text(integrity_json(spec.db))
    (tests_dir / "test_domain.py").write_text(TEST_MODULE.format(name=spec.name))
    policy_md = out / "policy.md"
    if spec.policy.empty():
        policy_md.unlink(missing_ok=True)  # a stale one would tell the agent rules of another build
    else:
        policy_md.write_text(render_policy(spec.name, spec.description, spec.policy, tools=sorted(verified)))


def checkpoint_path(out: Path) -> Path:
    """Where an unfinished build of the domain in `out` keeps its checkpoint."""
    return out / ".checkpoints.sqlite"


def run_pipeline(run: Run, fresh: bool = False, keep_checkpoint: bool = False) -> dict:
    """Run (or resume) the tool-building stages for `run.domain`; returns the final state.

    With `keep_checkpoint` the finished state stays in the checkpoint, for a caller whose later
    stages may yet stop: run again, this returns that state without building anything, and the
    caller removes the checkpoint (`checkpoint_path`) once every stage is done."""
    run.out.mkdir(parents=True, exist_ok=True)
    db_path = checkpoint_path(run.out)
    if fresh and db_path.exists():
        db_path.unlink()
    conn = sqlite3.connect(str(db_path), check_same_thread=False)
    try:
        graph = run.compiled(SqliteSaver(conn))
        config = {"configurable": {"thread_id": run.domain}, "max_concurrency": run.concurrency}
        snapshot = graph.get_state(config)
        if snapshot.next:
            run.log(f"resuming {run.domain} at {', '.join(snapshot.next)}")
            state = graph.invoke(None, config)
        elif snapshot.values:  # finished before, and a later stage stopped
            run.log(f"resuming {run.domain} after the verified tools")
            state = snapshot.values
        else:
            state = graph.invoke({"domain": run.domain, "results": {}, "timings": {}}, config)
    finally:
        conn.close()
        run.close()
    if not keep_checkpoint:
        db_path.unlink(missing_ok=True)  # finished: the next run starts from the transcript again
    return state
