"""What generated code meets when it runs in a confined process: the courtesy layers.

The operating system's layers are the boundary; these only make refusals clear and keep the
standard library working: a namespace whose builtins lack the escape hatches and whose import
statement allows the policy's modules (and what their C code imports lazily), a network stub,
the modules loaded before confinement, and tracebacks cut to the generated code's own frames.
"""

from __future__ import annotations

import builtins
import importlib
import traceback

from sandbox.policy import RULES


def guarded_import(where: str):
    """An `__import__` for generated code: the allowed modules only, never a relative import."""
    allowed = RULES.allowed_modules

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level or (name.split(".")[0] not in allowed and name not in RULES.lazy_imports):
            raise ImportError(f"import of {name!r} is not allowed {where}")
        return builtins.__import__(name, globals, locals, fromlist, level)

    return _import


def safe_builtins(where: str = "in the sandbox") -> dict:
    names = {k: v for k, v in vars(builtins).items() if k not in RULES.forbidden_names}
    names["__import__"] = guarded_import(where)
    return names


def run(code, name: str, globals_: dict, where: str = "in the sandbox") -> dict:
    """Execute generated `code` (source or compiled) as module `name`; its namespace."""
    namespace = {"__builtins__": safe_builtins(where), "__name__": name, **globals_}
    exec(code, namespace)
    return namespace


def block_network(where: str = "in the sandbox") -> None:
    """Python-level stubs over the socket module (seccomp refuses socket() underneath)."""
    import socket

    def refused(*_args, **_kwargs):
        raise PermissionError(f"network access is disabled {where}")

    socket.socket = refused  # type: ignore[misc]
    socket.create_connection = refused  # type: ignore[assignment]
    socket.getaddrinfo = refused  # type: ignore[assignment]


def preload() -> None:
    """Load, before confinement, every allowed module and whatever they load on first use, and fill
    the caches their first calls fill (strptime's locale tables, the time zone)."""
    for name in sorted((RULES.allowed_modules | RULES.lazy_imports) - {"db", "__future__"}):
        importlib.import_module(name)
    import datetime
    import decimal
    import json

    moment = datetime.datetime(2000, 1, 2, 3, 4, 5)
    moment.strftime("%A %B %c %x %X %Z %z %p")
    datetime.datetime.strptime("Sunday 2 January 2000 03:04 AM +0000", "%A %d %B %Y %I:%M %p %z")
    moment.timetuple()
    datetime.date.today()
    json.loads(json.dumps({"warm": [1.5, None, "é"]}))
    decimal.Decimal("1.005").quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_UP)


def frames(error: BaseException, filename_prefix: str) -> list[traceback.FrameSummary]:
    """The frames of `error`'s traceback inside generated code (compiled as `<prefix...>`)."""
    return [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(filename_prefix)]


def tool_traceback(error: BaseException) -> str:
    """A tool's error as the debug agent sees it: its own frames and the exception."""
    lines = traceback.format_list(frames(error, "<tool")) + traceback.format_exception_only(type(error), error)
    return "".join(lines)[-3000:]


def program_traceback(error: BaseException, source: str, filename: str) -> str:
    """A program's error frames as `line N: <its source line>` (the source is in no linecache)."""
    lines = source.splitlines() + [""]
    return "\n".join(f"line {f.lineno}: {lines[f.lineno - 1].strip()}" for f in frames(error, filename))[-1500:]
