"""Mutants proved equivalent without a model, from the code and the tool's schema alone.

Two kinds of change cannot alter what a tool does for any call that reaches it, and they are
the most common survivors of well-tested code:
- **A change under a guard argument validation already decides.** The server refuses a call
  whose arguments do not fit the schema before the tool runs (domains.tool_schemas), so in
  `if note_type not in NOTE_TYPES: raise ...` with `note_type` an enum of those values, the
  guard is never true and whatever it guards never runs. The guard is evaluated for every
  argument value validation lets through: each allowed value of an enum or boolean, one value
  per type otherwise (where the guard looks only at the type: isinstance, `is None`).
- **`session.add(row)` removed for a row loaded from the session** (get_or_raise, `.one()`, a
  loop over `session.exec(select(Model)...)`): the row is already in the session, so adding it
  is a no-op and the flush writes its changed columns either way.

The guard is read by a small evaluator of its own (names, constants, `and`/`or`/`not`,
`in`/`==`/`is`, isinstance): generated code is never executed here. Anything else is not
proved, and goes to the test agent as before.
"""

from __future__ import annotations

import ast
import itertools
from collections import Counter
from typing import TYPE_CHECKING, Any

from domains.spec import ToolSchema
from sandbox.guard import parse

if TYPE_CHECKING:  # verification.mutation counts proved survivors with this module
    from verification.mutation import Mutant

_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict, "tuple": tuple}
_PYTHON = {"string": [str], "integer": [int], "number": [int, float], "boolean": [bool], "array": [list],
           "object": [dict]}
_MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "add", "discard", "update", "setdefault",
             "popitem", "sort", "reverse", "difference_update", "intersection_update", "symmetric_difference_update"}
_DB_HELPERS = {"get_or_raise", "next_id", "now", "today"}  # the db module's, which take the session
_IMPORTED = {"db": _DB_HELPERS, "sqlmodel": {"select"}}  # where the names the proofs rely on come from
_TRUSTED = set(_TYPES) | {"isinstance", "select"} | _DB_HELPERS  # bound otherwise, no proof is given
_UNKNOWN = object()
_MAX_CASES = 4096


class _Opaque:
    """A value of which only the type is known: a string argument, say. Comparing it with a
    constant is unknown; isinstance and `is None` are exact."""

    def __init__(self, kind: type):
        self.kind = kind


def proved_equivalent(tool: ToolSchema, code: str, mutant: Mutant) -> str | None:
    """Why `mutant` of the tool's `code` behaves like the code for every call that passes argument
    validation; None when that is not proved."""
    tree, mutated = parse(code), parse(mutant.source)  # unparse → parse keeps the tree's shape
    operator, (index, variant) = mutant.operator, mutant.point
    nodes = list(ast.walk(tree))
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == tool.name), None)
    bound = _bound(tree)
    if function is None or not any(n is nodes[index] for n in ast.walk(function)) or _TRUSTED & set(bound):
        return None  # not the tool's own code, or a builtin or db helper the proof relies on is redefined
    parents = {child: parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
    node = nodes[index]
    if operator in ("remove_raise", "remove_write"):
        changed = getattr(node, ("body", "orelse", "finalbody")[variant // 100_000])[variant % 100_000]
        if operator == "remove_write":
            models = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "db"
                      for a in n.names if bound[a.asname or a.name] <= 1}  # the db module's classes, not rebound
            why = _loaded_row_added(function, changed, models)
            if why:
                return why
    else:
        changed = node
    # The branches the change lies in: (test, the truth that enters it) of each enclosing if, and the
    # if whose own test the change is in, if any.
    path: list[tuple[ast.expr, bool]] = []
    guard = None
    child, parent = changed, parents.get(changed)
    while parent is not None:
        if isinstance(parent, ast.If):
            if _inside(child, parent.test):
                guard = guard or parent
            elif any(child is s for s in parent.body) or any(child is s for s in parent.orelse):
                path.append((parent.test, any(child is s for s in parent.body)))
        child, parent = parent, parents.get(parent)
    if guard is None and not path:
        return None
    top = next(k for k, stmt in enumerate(function.body) if _inside(changed, stmt))
    domains, constants = _domains(tool, function, top), _constants(tree, bound)
    mutated_guard = list(ast.walk(mutated))[nodes.index(guard)] if guard is not None else None
    if guard is not None and not isinstance(mutated_guard, ast.If):
        return None
    tests = [t for t, _ in path] + ([guard.test, mutated_guard.test] if guard is not None else [])
    names = sorted({n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name) and n.id in domains})
    cases = list(itertools.islice(itertools.product(*(domains[n] for n in names)), _MAX_CASES + 1))
    if len(cases) > _MAX_CASES:
        return None
    for values in cases:
        env = {**constants, **dict(zip(names, values))}
        if any(_truth(test, env) is (not enters) for test, enters in path):
            continue  # this call never reaches the change
        if guard is None:
            return None
        before, after = _truth(guard.test, env), _truth(mutated_guard.test, env)
        if before is None or before != after:
            return None
    where = " and ".join(f"`{ast.unparse(t)[:60]}` is {str(e).lower()}" for t, e in path) or "the guard is reached"
    if guard is None:
        return f"the changed code runs only when {where}, which no call that passes argument validation makes so"
    return (f"the guard `{ast.unparse(guard.test)[:80]}` decides the same before and after the change for every "
            f"call that passes argument validation")


def _inside(node: ast.AST, root: ast.AST) -> bool:
    return any(n is node for n in ast.walk(root))


# -- arguments that pass validation --------------------------------------------------------------
def _domains(tool: ToolSchema, function: ast.FunctionDef, position: int) -> dict[str, list[Any]]:
    """Per parameter, the values that stand for every argument validation lets through, as the
    function sees them at its top-level statement `position`: a null or missing optional argument
    becomes the function's own default, and `if p is None: p = <constant>` earlier in the body
    replaces None. A parameter the function rebinds otherwise is left out (unknown)."""
    stores = Counter(n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    stores.update(n.arg for n in ast.walk(function) if isinstance(n, ast.arg) and n not in function.args.args)
    fills = {}  # parameter -> the constant `if p is None: p = <constant>` gives it, at top-level statement k
    for k, stmt in enumerate(function.body):
        if (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Assign)
                and isinstance(stmt.test, ast.Compare) and isinstance(stmt.test.left, ast.Name)
                and len(stmt.test.ops) == 1 and isinstance(stmt.test.ops[0], ast.Is)
                and isinstance(stmt.test.comparators[0], ast.Constant) and stmt.test.comparators[0].value is None
                and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0], ast.Name)
                and stmt.body[0].targets[0].id == stmt.test.left.id and isinstance(stmt.body[0].value, ast.Constant)):
            fills[stmt.test.left.id] = (k, stmt.body[0].value.value)
    defaults = dict(zip([a.arg for a in function.args.args][::-1], function.args.defaults[::-1]))
    out = {}
    for param in tool.parameters:
        fill = fills.get(param.name)
        if stores.get(param.name, 0) > (1 if fill else 0):
            continue
        if param.type == "string" and param.enum:
            values: list[Any] = list(param.enum)
        elif param.type == "boolean":
            values = [True, False]
        else:
            values = [_Opaque(kind) for kind in _PYTHON[param.type]]
        if not param.required:
            default = defaults.get(param.name)
            if not isinstance(default, ast.Constant):
                continue  # a default that is not a constant: unknown
            values.append(default.value)
        if fill and position > fill[0]:
            values = [fill[1] if v is None else v for v in values]
        out[param.name] = values
    return out


def _bound(tree: ast.Module) -> Counter:
    """How often each name is bound anywhere in the code (assigned, defined, imported, a parameter)."""
    bound: Counter = Counter()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound[n.id] += 1
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            bound[n.name] += 1
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            genuine = _IMPORTED.get(n.module, set()) if isinstance(n, ast.ImportFrom) else set()
            bound.update(a.asname or a.name for a in n.names if a.asname is not None or a.name not in genuine)
        elif isinstance(n, ast.arg):
            bound[n.arg] += 1
    return bound


def _constants(tree: ast.Module, bound: Counter) -> dict[str, Any]:
    """Names bound exactly once, at module level, to a literal collection of constants (a dict's
    keys) that the code never changes in place; `bound` is _bound(tree)."""
    changed = {n.value.id for n in ast.walk(tree) if isinstance(n, (ast.Attribute, ast.Subscript))
               and isinstance(n.value, ast.Name)
               and (not isinstance(n.ctx, ast.Load) or isinstance(n, ast.Attribute) and n.attr in _MUTATORS)}
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            value = _literal(stmt.value)
            if bound.get(name) == 1 and name not in changed and value is not _UNKNOWN:
                out[name] = value
    return out


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_literal(e) for e in node.elts]
        if any(i is _UNKNOWN for i in items):
            return _UNKNOWN
        return frozenset(items) if isinstance(node, ast.Set) else tuple(items)
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        keys = [_literal(k) for k in node.keys]
        return _UNKNOWN if any(k is _UNKNOWN for k in keys) else frozenset(keys)  # what `in` tests
    return _UNKNOWN


def _truth(node: ast.expr, env: dict[str, Any]) -> bool | None:
    if isinstance(node, ast.BoolOp):
        # left to right as Python goes: a part not known may raise or decide what runs after it
        decisive = isinstance(node.op, ast.Or)  # an Or is decided by a true part, an And by a false one
        for part in node.values:
            truth = _truth(part, env)
            if truth is None or truth is decisive:
                return truth
        return not decisive
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, env)
        return None if inner is None else not inner
    value = _value(node, env)
    if value is _UNKNOWN or isinstance(value, _Opaque):
        return None
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - a value whose truth is not plain
        return None


def _value(node: ast.expr, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, _UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_value(e, env) for e in node.elts]
        if any(i is _UNKNOWN or isinstance(i, _Opaque) for i in items):
            return _UNKNOWN
        return tuple(items)
    if isinstance(node, (ast.BoolOp, ast.UnaryOp)) and (not isinstance(node, ast.UnaryOp) or isinstance(node.op, ast.Not)):
        truth = _truth(node, env)
        return _UNKNOWN if truth is None else truth
    if isinstance(node, ast.Compare):
        return _compare(node, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
            and "isinstance" not in env and len(node.args) == 2 and not node.keywords:
        value, kinds = _value(node.args[0], env), _kinds(node.args[1], env)
        if value is _UNKNOWN or kinds is None:
            return _UNKNOWN
        kind = value.kind if isinstance(value, _Opaque) else type(value)
        return issubclass(kind, kinds)
    return _UNKNOWN


def _kinds(node: ast.expr, env: dict[str, Any]) -> tuple[type, ...] | None:
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    if not all(isinstance(n, ast.Name) and n.id in _TYPES and n.id not in env for n in names):
        return None
    return tuple(_TYPES[n.id] for n in names)


def _compare(node: ast.Compare, env: dict[str, Any]) -> Any:
    left = _value(node.left, env)
    for op, right_node in zip(node.ops, node.comparators):
        right = _value(right_node, env)
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        if isinstance(op, (ast.Is, ast.IsNot)):
            if right is not None and left is not None:
                return _UNKNOWN  # identity beyond None is not a question of values
            result = left is right if not isinstance(left, _Opaque) and not isinstance(right, _Opaque) else False
            result = result if isinstance(op, ast.Is) else not result
        elif isinstance(left, _Opaque) or isinstance(right, _Opaque):
            return _UNKNOWN
        elif isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(right, (tuple, frozenset, str)):
                return _UNKNOWN
            try:
                result = (left in right) == isinstance(op, ast.In)
            except TypeError:
                return _UNKNOWN
        elif isinstance(op, (ast.Eq, ast.NotEq)) and type(left) in (str, int, float, bool, type(None)) \
                and type(right) in (str, int, float, bool, type(None)):
            result = (left == right) == isinstance(op, ast.Eq)
        else:
            return _UNKNOWN
        if not result:
            return False
        left = right
    return True


# -- session.add of a row the session already holds ------------------------------------------
def _loaded_row_added(function: ast.FunctionDef, stmt: ast.stmt, models: set[str]) -> str | None:
    """Why removing `stmt` (a `session.add(row)`) changes nothing, when `row` is only ever bound to
    rows loaded through the session and the function never deletes or detaches it."""
    session = function.args.args[0].arg if function.args.args else None
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and _method(call, session) == "add" and len(call.args) == 1
            and not call.keywords and isinstance(call.args[0], ast.Name)):
        return None
    row = call.args[0].id
    for n in ast.walk(function):
        if isinstance(n, ast.Call) and _method(n, session) in ("delete", "expunge", "expunge_all", "close",
                                                               "merge", "rollback"):
            return None
        # the session handed to anything but the db helpers could delete or detach the row there
        if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == session for a in n.args) and not (
                isinstance(n.func, ast.Name) and n.func.id in _DB_HELPERS):
            return None
        if isinstance(n, ast.keyword) and isinstance(n.value, ast.Name) and n.value.id == session:
            return None
    bindings = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == row
                and not isinstance(n.ctx, ast.Load)]
    loaded = []
    for n in ast.walk(function):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and n.targets[0].id == row and _loads_one_row(n.value, session, models):
            loaded.append(n.targets[0])
        elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) and n.target.id == row \
                and _loads_rows(n.iter, session, function, models):
            loaded.append(n.target)
    if not bindings or len(loaded) != len(bindings) or row in {a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}:
        return None
    return (f"`{row}` is only ever a row loaded through the session, so it is already in the session: "
            f"`session.add` is a no-op and the flush writes its changed columns either way")


def _method(call: ast.Call, session: str | None) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == session:
        return func.attr
    return None


def _loads_one_row(node: ast.expr, session: str | None, models: set[str]) -> bool:
    """`get_or_raise(session, Model, key)` or `session.exec(select(Model)...).one()`: a row, never None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_or_raise":
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "one"
            and _selects_rows(node.func.value, session, models))


def _loads_rows(node: ast.expr, session: str | None, function: ast.FunctionDef, models: set[str]) -> bool:
    """`session.exec(select(Model)...)`, its `.all()`, or a name bound only to one of those."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "all":
        node = node.func.value
    if _selects_rows(node, session, models):
        return True
    if isinstance(node, ast.Name):
        binds = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == node.id
                 and not isinstance(n.ctx, ast.Load)]
        assigns = [n for n in ast.walk(function) if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and isinstance(n.targets[0], ast.Name) and n.targets[0].id == node.id]
        return bool(binds) and len(binds) == len(assigns) and all(
            _loads_rows(a.value, session, function, models) and not isinstance(a.value, ast.Name) for a in assigns)
    return False


def _selects_rows(node: ast.expr, session: str | None, models: set[str]) -> bool:
    """`session.exec(select(Model).where(...)...)` whose select names one class of the db module (rows, not columns)."""
    if not (isinstance(node, ast.Call) and _method(node, session) == "exec" and len(node.args) == 1):
        return False
    query = node.args[0]
    while isinstance(query, ast.Call) and isinstance(query.func, ast.Attribute):
        query = query.func.value
    return (isinstance(query, ast.Call) and isinstance(query.func, ast.Name) and query.func.id == "select"
            and len(query.args) == 1 and isinstance(query.args[0], ast.Name) and query.args[0].id in models)
