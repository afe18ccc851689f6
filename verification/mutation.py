"""Mutation testing of a tool: do its procedural tests notice when its code is wrong?

    from verification.mutation import mutation_report, domain_mutation_report
    report = mutation_report(Path("domains/job_seeking"), "respond_to_offer")
    print(report.score, [m.where for m in report.survivors])

Operators (our own, on the tool's AST; each mutant changes one place):
  flip_comparison   == ↔ !=, < ↔ >=, > ↔ <=, in ↔ not in, is ↔ is not
  move_boundary     < ↔ <=, > ↔ >=
  change_constant   an integer or float n → n + 1 and n → n − 1 (a bound moved either way), True ↔ False
  negate_condition  the test of an if, while, conditional expression or assert → not (test)
  remove_write      `session.add/delete/merge(...)` or an assignment to a row's attribute → pass
  remove_raise      raise ... → pass
  drop_value        one string dropped from a literal tuple, list or set of strings (allowed values)
Operators a reviewer would add (REVIEWER_OPERATORS), for what tests of this kind most often miss;
they are used by `python -m bench mutation` only, an independent measurement, since the gate's
recorded requests cover the mutants of OPERATORS alone:
  drop_call         a normalising call dropped: x.strip() / .lower() / .upper() / ... → x, round(x) / int(x) → x
  drop_condition    each condition of a query's .where(...) / .filter(...) dropped in turn
  change_default    a string default of a parameter changed ('' ↔ a non-empty value)
Every mutant of a tool is defined into a sandbox in place of the tool and its procedural tests
run against it: a mutant is killed when a test fails, survived when all pass, and invalid when
it does not load (not counted). Rejection cases whose arguments the server's argument validation
(domains.tool_schemas.ArgumentValidator) refuses never reach the tool; they are flagged and left
out, since they test nothing of the tool. Generated code runs only in the sandbox; the parent
reads the verdicts.
"""

from __future__ import annotations

import ast
import copy
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from domains.spec import DomainSpec, ToolTest
from domains.tool_schemas import ArgumentError, ArgumentValidator
from sandbox.guard import parse
from verification.equivalence import proved_equivalent
from verification.procedural import tool_names, tool_sources
from verification.sandbox import Sandbox
from verification.verdict import signature

OPERATORS = ("flip_comparison", "move_boundary", "change_constant", "negate_condition", "remove_write",
             "remove_raise", "drop_value")
_FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
         ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_SYMBOL = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_WRITES = {"add", "add_all", "delete", "merge"}
REVIEWER_OPERATORS = ("drop_call", "drop_condition", "change_default")
_NORMALISERS = {"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize"}
_CONVERSIONS = {"round", "int"}


class Mutant(BaseModel):
    operator: str
    line: int  # in the domain's tools.py
    description: str
    source: str = ""
    status: Literal["killed", "survived", "invalid", "pending"] = "pending"
    killed_by: str | None = None  # the first test that failed
    point: tuple[int, int] = (0, 0)  # (node in ast.walk order of the parsed source, variant): where it changed

    @property
    def where(self) -> str:
        return f"line {self.line}: {self.description}"


class ToolMutationReport(BaseModel):
    tool: str
    mutants: list[Mutant]
    tests: int  # the cases run against each mutant
    unreachable_rejections: list[str]  # rejection cases argument validation refuses first
    proved_equivalent: int = 0  # survivors verification.equivalence proves no call can tell from the code
    seconds: float = 0.0

    @property
    def killed(self) -> int:
        return sum(m.status == "killed" for m in self.mutants)

    @property
    def survived(self) -> int:
        return sum(m.status == "survived" for m in self.mutants)

    @property
    def score(self) -> float | None:
        counted = self.killed + self.survived
        return round(self.killed / counted, 4) if counted else None

    @property
    def survivors(self) -> list[Mutant]:
        return [m for m in self.mutants if m.status == "survived"]

    def summary(self) -> dict:
        """What report.json keeps per tool."""
        return {"mutants": self.killed + self.survived, "killed": self.killed, "score": self.score,
                "invalid": sum(m.status == "invalid" for m in self.mutants),
                "unreachable_rejections": self.unreachable_rejections, "proved_equivalent": self.proved_equivalent,
                "survivors": [f"{m.operator} at {m.where}" for m in self.survivors]}


# -- mutation points ---------------------------------------------------------------------------
def _points(tree: ast.Module, first_line: int) -> list[tuple[int, str, int, str, int]]:
    """(node index in ast.walk order, operator, variant, description, line) of every mutation."""
    found = []
    for i, node in enumerate(ast.walk(tree)):
        line = getattr(node, "lineno", first_line)
        if line < first_line:
            continue  # the import header
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in _FLIP:
                    found.append((i, "flip_comparison", k, f"{_SYMBOL[type(op)]} → {_SYMBOL[_FLIP[type(op)]]}", line))
                if type(op) in _BOUNDARY:
                    found.append((i, "move_boundary", k, f"{_SYMBOL[type(op)]} → {_SYMBOL[_BOUNDARY[type(op)]]}", line))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            found.append((i, "change_constant", 0, f"{node.value!r} → {not node.value!r}", line))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            for k, step in enumerate((1, -1)):
                found.append((i, "change_constant", k, f"{node.value!r} → {node.value + step!r}", line))
        elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            found.append((i, "negate_condition", 0, f"not ({ast.unparse(node.test)[:60]})", line))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            for k, e in enumerate(node.elts):
                found.append((i, "drop_value", k, f"{e.value!r} dropped", line))
        elif isinstance(node, ast.Call):
            found += _call_points(i, node, line)
        elif isinstance(node, ast.arguments):
            for k, default in enumerate(node.defaults + node.kw_defaults):
                if isinstance(default, ast.Constant) and isinstance(default.value, str):
                    found.append((i, "change_default", k, f"default {default.value!r} → {_other(default.value)!r}",
                                  default.lineno))
        for body_name in ("body", "orelse", "finalbody"):
            body = getattr(node, body_name, None)
            for k, stmt in enumerate(body if isinstance(body, list) else []):
                if not isinstance(stmt, ast.stmt):
                    continue
                if isinstance(stmt, ast.Raise):
                    found.append((i, "remove_raise", _slot(body_name, k), f"{ast.unparse(stmt)[:60]} removed", stmt.lineno))
                elif _is_write(stmt):
                    found.append((i, "remove_write", _slot(body_name, k), f"{ast.unparse(stmt)[:60]} removed", stmt.lineno))
    return found


def _call_points(i: int, node: ast.Call, line: int) -> list[tuple[int, str, int, str, int]]:
    func, found = node.func, []
    if isinstance(func, ast.Attribute) and func.attr in _NORMALISERS and not node.args and not node.keywords:
        found.append((i, "drop_call", 0, f".{func.attr}() dropped", line))
    elif isinstance(func, ast.Name) and func.id in _CONVERSIONS and len(node.args) >= 1 and not node.keywords:
        found.append((i, "drop_call", 0, f"{func.id}(...) dropped", line))
    if isinstance(func, ast.Attribute) and func.attr in ("where", "filter"):
        for k, arg in enumerate(node.args):
            found.append((i, "drop_condition", k, f"condition `{ast.unparse(arg)[:50]}` dropped", line))
    return found


def _other(value: str) -> str:
    return "" if value else "x"


def _slot(body_name: str, k: int) -> int:
    return ("body", "orelse", "finalbody").index(body_name) * 100_000 + k


def _is_write(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return isinstance(func, ast.Attribute) and func.attr in _WRITES
    if isinstance(stmt, (ast.Assign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(t, ast.Attribute) for t in targets)
    return False


def _apply(tree: ast.Module, index: int, operator: str, variant: int) -> ast.Module:
    tree = copy.deepcopy(tree)
    node = next(n for i, n in enumerate(ast.walk(tree)) if i == index)
    if operator == "flip_comparison":
        node.ops[variant] = _FLIP[type(node.ops[variant])]()
    elif operator == "move_boundary":
        node.ops[variant] = _BOUNDARY[type(node.ops[variant])]()
    elif operator == "change_constant":
        node.value = (not node.value) if isinstance(node.value, bool) else node.value + (1, -1)[variant]
    elif operator == "negate_condition":
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    elif operator == "drop_value":
        del node.elts[variant]
    elif operator == "drop_call":  # the call becomes what it was called on
        _replace(tree, node, node.func.value if isinstance(node.func, ast.Attribute) else node.args[0])
    elif operator == "drop_condition":
        del node.args[variant]  # `.where()` with no condition is allowed and filters nothing
    elif operator == "change_default":
        default = (node.defaults + node.kw_defaults)[variant]
        default.value = _other(default.value)
    else:  # remove_raise, remove_write: the statement becomes `pass`
        body = getattr(node, ("body", "orelse", "finalbody")[variant // 100_000])
        body[variant % 100_000] = ast.Pass()
    return ast.fix_missing_locations(tree)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[next(k for k, v in enumerate(value) if v is old)] = new
                return


def mutants(source: str, line_offset: int = 0, first_line: int = 1,
            operators: tuple[str, ...] = OPERATORS) -> list[Mutant]:
    """Every distinct mutant of a tool's source by `operators`, in source order; lines shifted by `line_offset`."""
    tree = parse(source)
    original = ast.unparse(tree)
    seen, out = {original}, []
    for index, operator, variant, description, line in _points(tree, first_line):
        if operator not in operators:
            continue
        text = ast.unparse(_apply(tree, index, operator, variant))
        if text in seen:
            continue
        seen.add(text)
        out.append(Mutant(operator=operator, line=line + line_offset, description=description, source=text,
                          point=(index, variant)))
    return sorted(out, key=lambda m: (m.line, m.operator, m.description))


# -- running -----------------------------------------------------------------------------------
def unreachable_rejections(spec: DomainSpec, tool: str, tests: list[dict]) -> list[str]:
    """Rejection cases the server's argument validation refuses before the tool could run."""
    validator = ArgumentValidator(spec.tool(tool))
    names = []
    for raw in tests:
        if raw["kind"] != "rejection":
            continue
        try:
            validator.validate(raw.get("arguments"))
        except ArgumentError:
            names.append(raw["name"])
    return names


def _placement(domain_dir: Path, tool: str, source: str) -> tuple[int, int]:
    """(line offset into tools.py, first line of the tool's own code in its source block)."""
    lines = (domain_dir / "tools.py").read_text().splitlines()
    marker = lines.index(f"# tool: {tool}") + 1  # 1-based line of the marker
    header = source.split("\n\n", 1)[0].count("\n") + 1  # import lines
    first = header + 2
    return marker + 1 - first, first


def reference(verdicts: list[dict] | str) -> dict[str, str]:
    """Signatures of the verified code's passing verdicts, by test name: a mutant's tests stop at
    the first whose outcome differs from the code's (run_mutant)."""
    return {} if isinstance(verdicts, str) else {v["name"]: signature(v) for v in verdicts if v["passed"]}


def run_mutant(box: Sandbox, tool: str, mutant: Mutant, tests: list[dict], signatures: dict[str, str] | None = None) -> None:
    """Killed at the first test that fails, survived when all pass, invalid when it does not load.
    With the verified code's `signatures` (reference()), the tests after the first failure are not run."""
    stop = [signatures.get(t["name"]) for t in tests] if signatures else None
    results = box.run_source(tool, mutant.source, tests, stop)
    if isinstance(results, str):
        mutant.status = "invalid"
    else:
        failed = next((r["name"] for r in results if not r["passed"]), None)
        mutant.status, mutant.killed_by = ("killed", failed) if failed else ("survived", None)


def mutation_report(domain_dir: Path, tool: str, workers: int = 1, sandboxes: list[Sandbox] | None = None,
                    operators: tuple[str, ...] = OPERATORS, leave_out: frozenset[str] = frozenset()) -> ToolMutationReport:
    """Mutate one verified tool and run its procedural tests (less those named in `leave_out`)
    against every mutant."""
    domain_dir = Path(domain_dir)
    started = time.perf_counter()
    spec = DomainSpec.model_validate_json((domain_dir / "spec.json").read_text())
    source = tool_sources(domain_dir)[tool]
    tests = [ToolTest.model_validate(t).model_dump(mode="json")
             for t in json.loads((domain_dir / "tests" / f"{tool}.json").read_text()) if t["name"] not in leave_out]
    unreachable = unreachable_rejections(spec, tool, tests)
    runnable = [t for t in tests if t["name"] not in unreachable]
    offset, first = _placement(domain_dir, tool, source)
    found = mutants(source, offset, first, operators)
    own = sandboxes is None
    boxes = sandboxes or [Sandbox((domain_dir / "db.py").read_text()) for _ in range(max(1, workers))]
    try:
        signatures = reference(boxes[0].run_source(tool, source, runnable))

        def lane(k: int) -> None:
            for mutant in found[k::len(boxes)]:
                run_mutant(boxes[k], tool, mutant, runnable, signatures)

        with ThreadPoolExecutor(len(boxes)) as pool:
            list(pool.map(lane, range(len(boxes))))
    finally:
        if own:
            for box in boxes:
                box.close()
    proved = sum(m.status == "survived" and proved_equivalent(spec.tool(tool), source, m) is not None for m in found)
    return ToolMutationReport(tool=tool, mutants=found, tests=len(runnable), unreachable_rejections=unreachable,
                              proved_equivalent=proved, seconds=round(time.perf_counter() - started, 2))


def domain_mutation_report(domain_dir: Path, tools: list[str] | None = None, workers: int = 2,
                           progress: bool = True, operators: tuple[str, ...] = OPERATORS,
                           before_gate: bool = False) -> dict:
    """Mutation scores of a domain's tools and overall, in the shape report.json keeps. With
    `before_gate`, the cases the pipeline's mutation gate added (report.json) are left out."""
    domain_dir = Path(domain_dir)
    names = tools or tool_names(domain_dir)
    gate = json.loads((domain_dir / "report.json").read_text()).get("mutation", {}).get("tools", {}) \
        if before_gate else {}
    boxes = [Sandbox((domain_dir / "db.py").read_text()) for _ in range(max(1, workers))]
    reports = []
    try:
        for i, name in enumerate(names, 1):
            record = gate.get(name, {})
            added = frozenset(record.get("added_cases", [])) | frozenset(record.get("refuted_equivalences", {}).values())
            reports.append(mutation_report(domain_dir, name, sandboxes=boxes, operators=operators, leave_out=added))
            if progress:
                r = reports[-1]
                print(f"mutation: [{i}/{len(names)}] {name}: {r.killed}/{r.killed + r.survived} killed "
                      f"({r.seconds:.1f}s)", file=sys.stderr)
    finally:
        for box in boxes:
            box.close()
    return summarise(reports)


def summarise(reports: list[ToolMutationReport]) -> dict:
    killed = sum(r.killed for r in reports)
    counted = killed + sum(r.survived for r in reports)
    by_operator = {}
    for op in OPERATORS + REVIEWER_OPERATORS:
        ms = [m for r in reports for m in r.mutants if m.operator == op and m.status in ("killed", "survived")]
        if ms:
            by_operator[op] = {"mutants": len(ms), "killed": sum(m.status == "killed" for m in ms),
                               "score": round(sum(m.status == "killed" for m in ms) / len(ms), 4)}
    proved = sum(r.proved_equivalent for r in reports)
    return {"score": round(killed / counted, 4) if counted else None, "mutants": counted, "killed": killed,
            "proved_equivalent": proved,
            "score_without_proved": round(killed / (counted - proved), 4) if counted > proved else None,
            "by_operator": by_operator,
            "unreachable_rejections": sum(len(r.unreachable_rejections) for r in reports),
            "tools": {r.tool: r.summary() for r in reports}}
