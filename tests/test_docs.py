"""The README's and the docs' commands run, and their links lead somewhere.

Every ```sh, ```bash and ```python block of README.md and docs/*.md runs, in order, in one bash
session per document, so that `export` and background servers carry from block to block as in a
reader's terminal. The session works in a scratch folder that links to this checkout's files and
environments (`.venv`, `.venv-trainers`), where `python` is the core environment's. An HTML comment on the line before a
block says how to treat it:

    <!-- no-run: why -->               not run; the reason is required (needs a model, sets up an environment, ...)
    <!-- servers -->                   its `... &` lines start servers; the document goes on once every
                                       `--port N` it names accepts connections, and they stop with it
    <!-- run-in: .venv-trainers -->    a Python block run by that environment's interpreter

Ports 8000 and 8001 are replaced by free ones, so that runs do not collide. ```json blocks must
parse. Links are checked in domains/*/README.md too, anchors against the target's headings.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RUN_DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINK_DOCS = [*RUN_DOCS, *sorted((ROOT / "domains").glob("*/README.md"))]
RUNNABLE = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python", "py": "python"}
MARKERS = {"no-run", "servers", "run-in"}
PORTS = ("8000", "8001")
OUTPUTS = {"exports", "runs"}  # written by documented commands: fresh in each scratch folder
BLOCK_TIMEOUT_S = 300
SERVER_START_S = 120
DONE = "__docs_block_done__"

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*([\w-]+)\s*(?::\s*(.*?))?\s*-->\s*\n$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


@dataclass
class Block:
    doc: Path
    line: int
    language: str  # the fence's info string, lowercased
    code: str
    marker: str | None = None
    argument: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of a document, each with the marker comment on the line before it."""
    text = doc.read_text()
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        marker = MARKER.search(before[-300:]) if before.endswith("-->\n") else None
        found.append(Block(doc, before.count("\n") + 1, match.group(1).lower(), match.group(2),
                           marker.group(1) if marker else None, (marker.group(2) or "") if marker else ""))
    return found


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    text = FENCE.sub("", doc.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


# -- what needs no run ------------------------------------------------------------------------

def test_readme_is_short_and_starts_with_the_two_setup_commands():
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; the rest belongs in docs/"
    first = next(b for b in blocks(README) if RUNNABLE.get(b.language) == "sh")
    commands = [line.split("#")[0].strip() for line in first.code.splitlines() if line.split("#")[0].strip()]
    assert commands == ["make domain NAME=job_seeking", "make test"]


@pytest.mark.parametrize("doc", LINK_DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_relative_links_lead_to_files_and_headings(doc):
    broken = []
    for target in LINK.findall(FENCE.sub("", doc.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: outside the repository
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{doc.relative_to(ROOT)}: {broken}"


@pytest.mark.parametrize("doc", RUN_DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_block_is_run_or_says_why_not(doc):
    for block in blocks(doc):
        assert block.marker in (None, *MARKERS), f"{block.where}: unknown marker {block.marker!r}"
        if block.marker == "no-run":
            assert block.argument, f"{block.where}: say why the block is not run (<!-- no-run: why -->)"
        if block.marker == "servers":
            assert re.findall(r"--port (\d+)", block.code), f"{block.where}: a servers block names its --port"
        if block.language == "json":
            json.loads(block.code)  # a configuration shown must be one


# -- running them -----------------------------------------------------------------------------

def _free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Session:
    """One bash session in a scratch folder: what a reader's terminal would be."""

    def __init__(self, scratch: Path):
        # the checkout as the reader has it, except the folders commands write into
        for entry in ROOT.iterdir():
            if not entry.name.startswith(".") and entry.name not in OUTPUTS:
                (scratch / entry.name).symlink_to(entry)
        for env_dir, target in ((".venv", Path(sys.prefix)), (".venv-trainers", ROOT / ".venv-trainers")):
            if target.exists():
                (scratch / env_dir).symlink_to(target)
        env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   LITELLM_LOCAL_MODEL_COST_MAP="True", PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
        self.scratch, self.output = scratch, []
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.shell = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=scratch, env=env,
                                      text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()
        self._send("set -eo pipefail")

    def _read(self) -> None:
        for line in self.shell.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _send(self, command: str) -> None:
        self.shell.stdin.write(command + "\n")
        self.shell.stdin.flush()

    def run(self, block: Block, code: str) -> None:
        """Run one block; fail with the session's output if it fails or outlives its time."""
        script = self.scratch / f"block_{block.line}.{'py' if RUNNABLE[block.language] == 'python' else 'sh'}"
        script.write_text(code)
        if RUNNABLE[block.language] == "python":
            python = f"{block.argument}/bin/python" if block.marker == "run-in" else "python"
            self._send(f"{python} {script.name} </dev/null; echo {DONE}")
        else:
            self._send(f"source {script.name} </dev/null; echo {DONE}")
        deadline = time.monotonic() + BLOCK_TIMEOUT_S
        while True:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                # a failed command ends the shell (set -e), but servers it started keep the pipe open
                if self.shell.poll() is not None and self.lines.empty():
                    pytest.fail(f"{block.where} failed (exit {self.shell.returncode}):\n{self.tail()}")
                if time.monotonic() > deadline:
                    pytest.fail(f"{block.where} ran past {BLOCK_TIMEOUT_S} s:\n{self.tail()}")
                continue
            if line is None:
                pytest.fail(f"{block.where} failed (exit {self.shell.wait()}):\n{self.tail()}")
            if line.strip() == DONE:
                return
            self.output.append(line)

    def wait_for_ports(self, block: Block, ports: list[int]) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while not all(_listening(port) for port in ports):
            if time.monotonic() > deadline:
                pytest.fail(f"{block.where}: ports {ports} not open after {SERVER_START_S} s:\n{self.tail()}")
            time.sleep(0.5)

    def tail(self) -> str:
        while not self.lines.empty():
            self.output.append(self.lines.get() or "")
        return "".join(self.output[-60:])

    def close(self) -> None:
        """Stop the shell and every server it started: they share its process group."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + 15
            try:
                os.killpg(self.shell.pid, sig)
                while time.monotonic() < deadline:
                    self.shell.poll()  # reap the shell, or its zombie keeps the group alive
                    os.killpg(self.shell.pid, 0)
                    time.sleep(0.2)
            except ProcessLookupError:
                return


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("doc", RUN_DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_documented_commands_run(doc, tmp_path):
    runnable = [b for b in blocks(doc) if b.language in RUNNABLE and b.marker != "no-run"]
    if not runnable:
        pytest.skip("no block to run")
    ports = {port: _free_port() for port in PORTS}
    session = Session(tmp_path)
    try:
        for block in runnable:
            code = re.sub(r"\b(800[01])\b", lambda m: ports[m.group(1)], block.code)
            session.run(block, code)
            if block.marker == "servers":
                session.wait_for_ports(block, [int(p) for p in re.findall(r"--port (\d+)", code)])
    finally:
        session.close()
