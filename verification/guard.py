"""Static checks on generated code, applied before anything runs.

Imports must come from an allow-list, and the names that let code escape a restricted
namespace (eval, open, dunder attributes, ...) are refused outright. The check runs on the
AST, so it is cheap and sees through formatting tricks; the sandbox worker enforces the same
allow-list again at run time.
"""

from __future__ import annotations

import ast
import threading

ALLOWED_MODULES = frozenset({
    "db", "datetime", "re", "math", "json", "decimal", "typing", "collections", "itertools",
    "functools", "string", "sqlmodel", "sqlalchemy", "__future__", "enum", "dataclasses",
})

FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "input",
    "breakpoint", "exit", "quit", "help", "memoryview", "getattr", "setattr", "delattr",
    "__builtins__", "__loader__", "__spec__",
})


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
    if problems:
        raise UnsafeCode("; ".join(problems))
