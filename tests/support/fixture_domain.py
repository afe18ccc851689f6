"""A verified fixture domain for the runtime and MCP server tests (conftest.py builds it once per run).

The scripted reading-list domain goes through the real pipeline; then tools that misbehave on
purpose (write then raise, write then hang, write then swallow the sandbox's alarm), a
destructive tool and two hand-made tasks are added, as a generated domain would carry them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from agents.build import Run, run_pipeline
from llm import LLM, ScriptedBackend, Transcript
from mcp_servers.http_process import Served
from mcp_servers.http_process import http_server as served_over_http
from tests.support.scripted_domain import answers

ROOT = Path(__file__).resolve().parents[2]

DUNE = {"book_id": "BK-0001", "title": "Dune", "author": "Herbert", "pages": 412, "status": "unread",
        "added_at": "2025-01-02T10:00:00"}
EMMA = {"book_id": "BK-0002", "title": "Emma", "author": "Austen", "pages": 300, "status": "unread",
        "added_at": "2025-01-05T10:00:00"}

_WRITE = '    session.add(Book(book_id=next_id(session, Book), title=title, author="X", added_at=now(session)))\n' \
         '    session.flush()\n'

EXTRA_TOOLS = {
    "add_then_fail": (
        "Add a book, then fail (test tool).",
        "def add_then_fail(session, title: str) -> dict:\n" + _WRITE + '    raise InvalidInput("refused after writing")\n',
    ),
    "add_then_hang": (
        "Add a book, then loop forever (test tool).",
        "def add_then_hang(session, title: str) -> dict:\n" + _WRITE + "    n = 0\n    while True:\n        n += 1\n",
    ),
    "add_then_stall": (
        "Add a book, then loop forever, swallowing the sandbox's alarm (test tool).",
        "def add_then_stall(session, title: str) -> dict:\n" + _WRITE
        + "    while True:\n        try:\n            while True:\n                pass\n"
          "        except BaseException:\n            pass\n",
    ),
    "remove_book": (
        "Remove a book from the reading list.",
        "def remove_book(session, book_id: str) -> dict:\n"
        "    book = get_or_raise(session, Book, book_id)\n    session.delete(book)\n    session.flush()\n"
        '    return {"book_id": book_id, "removed": True}\n',
    ),
}

TASKS = {
    "finish_dune": {
        "id": "finish_dune",
        "instruction": "Mark Dune as read, then add Persuasion by Jane Austen (320 pages).",
        "user_profile": "A reader who keeps a tidy list.",
        "initial_state": {"book": [DUNE, EMMA]},
        "reference_solution": [
            {"tool": "mark_read", "arguments": {"book_id": "BK-0001"}},
            {"tool": "add_book", "arguments": {"title": "Persuasion", "author": "Jane Austen", "pages": 320}},
        ],
        "reward_spec": {},
    },
    "broken_reference": {
        "id": "broken_reference",
        "instruction": "Mark a book that does not exist as read.",
        "user_profile": "",
        "initial_state": {"book": [DUNE]},
        "reference_solution": [{"tool": "mark_read", "arguments": {"book_id": "BK-0404"}}],
        "reward_spec": {},
    },
}


def _tool_schema(name: str, description: str) -> dict:
    key = "book_id" if name == "remove_book" else "title"
    return {"name": name, "description": description, "mutates": True, "destructive": name == "remove_book",
            "parameters": [{"name": key, "type": "string", "description": "Book id" if key == "book_id" else "Title"}],
            "output": [{"name": "book_id", "type": "string"}]}


def build_fixture_domain(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    domain = out / "reading_list"
    llm = LLM(ScriptedBackend(answers()), Transcript(out / "transcript.jsonl"))
    run_pipeline(Run("reading_list", domain, llm, test_timeout=0.5))

    tools_py = domain / "tools.py"
    tools_py.write_text(tools_py.read_text().rstrip("\n") + "\n" + "".join(
        f"\n\n# tool: {name}\n{code}" for name, (_, code) in EXTRA_TOOLS.items()))
    spec = json.loads((domain / "spec.json").read_text())
    spec["tools"] += [_tool_schema(name, description) for name, (description, _) in EXTRA_TOOLS.items()]
    spec["tool_tables"].update({name: ["book"] for name in EXTRA_TOOLS})
    (domain / "spec.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    report = json.loads((domain / "report.json").read_text())
    report["tools"]["verified"] = sorted(report["tools"]["verified"] + list(EXTRA_TOOLS))
    (domain / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (domain / "tasks").mkdir(exist_ok=True)
    for task_id, task in TASKS.items():
        (domain / "tasks" / f"{task_id}.json").write_text(json.dumps(task, indent=2) + "\n")
    (out / "ready").write_text("ok")
    return domain


def domain_with_tools(base: Path, out: Path, tools: dict[str, tuple[dict[str, str], str]]) -> Path:
    """A copy of `base` with more verified tools: name -> ({parameter: JSON type}, code). Used to
    serve code written to misbehave, the way a generated domain could carry it."""
    domain = out / base.name
    shutil.copytree(base, domain)
    with (domain / "tools.py").open("a") as tools_py:
        tools_py.write("".join(f"\n\n# tool: {name}\n{code}" for name, (_, code) in tools.items()))
    spec = json.loads((domain / "spec.json").read_text())
    spec["tools"] += [{"name": name, "description": f"{name} (test tool)", "mutates": True,
                       "parameters": [{"name": p, "type": t, "description": p} for p, t in params.items()],
                       "output": []} for name, (params, _) in tools.items()]
    spec["tool_tables"].update({name: ["book"] for name in tools})
    (domain / "spec.json").write_text(json.dumps(spec))
    report = json.loads((domain / "report.json").read_text())
    report["tools"]["verified"] = sorted(report["tools"]["verified"] + list(tools))
    (domain / "report.json").write_text(json.dumps(report))
    return domain


@contextmanager
def http_server(domain: Path, *options: str) -> Iterator[Served]:
    """`python -m mcp_servers DOMAIN --transport http` on a free port with a fresh control token,
    once /health answers: its base URL and token (`.headers` for the control API)."""
    with ExitStack() as stack:
        try:
            served = stack.enter_context(served_over_http(domain, *options, startup_s=60))
        except RuntimeError as error:
            pytest.fail(f"the HTTP server did not start: {error}")
        yield served
