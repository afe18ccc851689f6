"""The static guard: checks on generated code, applied before anything runs.

Imports must come from an allow-list, and the names that let code escape a restricted
namespace (eval, open, dunder attributes, ...) are refused outright. The check runs on the
AST, so it is cheap and sees through formatting tricks; the confined process enforces the same
allow-list again at run time (sandbox.generated).
"""

from __future__ import annotations

import ast
import importlib
import threading
import types

from sandbox.policy import ALLOWED_MODULES, FORBIDDEN_NAMES


class UnsafeCode(ValueError):
    """Generated code that the sandbox refuses to run."""


_PARSE = threading.Lock()


def parse(source: str) -> ast.Module:
    """ast.parse, one thread at a time: CPython 3.11 before 3.11.8 can fail with "AST constructor
    recursion depth mismatch" when threads parse at once (the pipeline builds tools in threads)."""
    with _PARSE:
        return ast.parse(source)


def check_source(source: str, allowed: frozenset[str] = ALLOWED_MODULES) -> None:
    """Raise UnsafeCode listing every refused construct in `source`."""
    try:
        tree = parse(source)
    except SyntaxError as error:
        raise UnsafeCode(f"syntax error at line {error.lineno}: {error.msg}") from None
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in allowed:
                    problems.append(f"line {node.lineno}: import of {alias.name!r} is not allowed")
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            if node.level or module not in allowed:
                problems.append(f"line {node.lineno}: import from {node.module!r} is not allowed")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.append(f"line {node.lineno}: use of {node.id!r} is not allowed")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            problems.append(f"line {node.lineno}: access to {node.attr!r} is not allowed")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            problems.append(f"line {node.lineno}: global state is not allowed")
    problems += _module_links(tree, allowed)
    if problems:
        raise UnsafeCode("; ".join(problems))


def _module_links(tree: ast.Module, allowed: frozenset[str]) -> list[str]:
    """Attribute chains and from-imports that reach, through an allowed module, a module outside
    the allow-list (`json.codecs.sys`, `from json import codecs`). The allowed libraries are
    imported here to look into them (never the domain's `db`, nor anything outside the list).
    This closes the obvious routes; an object's attributes lead to modules too, which is why the
    confinement, not this check, is the boundary."""
    def outside(value: object) -> bool:
        return isinstance(value, types.ModuleType) and value.__name__.split(".")[0] not in allowed

    def module(name: str) -> types.ModuleType | None:
        if name.split(".")[0] not in allowed - {"db", "__future__"}:
            return None
        try:
            return importlib.import_module(name)
        except Exception:  # noqa: BLE001 (a name that does not import is refused at run time)
            return None

    bound: dict[str, types.ModuleType] = {}
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = module(alias.name if alias.asname else alias.name.split(".")[0])
                if found is not None:
                    bound[alias.asname or alias.name.split(".")[0]] = found
        elif isinstance(node, ast.ImportFrom) and not node.level and (source := module(node.module or "")):
            for alias in node.names:
                value = getattr(source, alias.name, None)
                if outside(value):
                    problems.append(f"line {node.lineno}: import of module {value.__name__!r} is not allowed")
                elif isinstance(value, types.ModuleType):
                    bound[alias.asname or alias.name] = value
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
            continue
        chain, base = [node.attr], node.value
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in bound:
            continue
        value = bound[base.id]
        for attr in chain:
            value = getattr(value, attr, None)
            if outside(value):
                problems.append(f"line {node.lineno}: access to module {value.__name__!r} is not allowed")
                break
            if not isinstance(value, types.ModuleType):
                break
    return sorted(set(problems), key=lambda p: (int(p.split(":")[0].split()[1]), p))
