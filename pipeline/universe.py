"""`python -m pipeline.universe [NAMES|all] [--model M] [--jobs N] [--ray] [--run build|verify|tasks|eval] [-- ARGS]`:
a command over many domains (`make universe`, and `make verify|tasks|eval NAME=a,b|all`).

Each domain runs as a process of its own (`python -m pipeline NAME` to build, offline from its
transcript or with --model; the domain's procedural tests; `python -m tasks NAME`; `python -m
rollouts NAME`), several at once (--jobs, default half the cores, at least one), its output in a
log file of its own. A line per domain says when it starts, when its stage changes (with the
seconds so far) and how it ended; a table at the end says what passed and what failed, with the
log and the last error line. A failure never stops another domain: each writes only its own
folder; a domain not built fails on its own (no transcript to replay, no tests), not the run. The
exit status is 1 when any domain failed, 2 when the names are not domain names. One domain (and
no --logs, no --ray) runs in the foreground, its output on the terminal, its exit status the run's.
With --ray each domain's process runs in a Ray task instead, on the cluster RAY_ADDRESS names or an
embedded local Ray (pipeline.universe_ray): the same processes, so the same files, transcripts,
checkpoints and resume.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from domains import registry

RUNS = ("build", "verify", "tasks", "eval")
POLL_S = 0.5
_ERROR = re.compile(r"error|fail|traceback|refused|stopped", re.IGNORECASE)


def command_for(run: str, name: str, model: str | None, extra: list[str]) -> list[str]:
    """The process that does `run` for one domain."""
    python = [sys.executable, "-m"]
    if run == "verify":
        return [*python, "pytest", "-q", "-p", "no:cacheprovider", str(registry.folder(name) / "tests"), *extra]
    module = {"build": "pipeline", "tasks": "tasks", "eval": "rollouts"}[run]
    return [*python, module, name, *(["--model", model] if model else []), *extra]


def stage_of(line: str) -> str | None:
    """The stage a log line speaks of ("schema: 48 tools proposed" -> schema), or None."""
    line = line.strip()
    if line.startswith(("tool ", "[code/", "[test/", "[debug/", "[mutants/")):
        return "tools"
    if re.match(r"task_\d+:", line):
        return "tasks"
    head = re.match(r"([a-z][a-z ]{1,20}):", line)
    return head.group(1) if head and head.group(1) != "worldsmith" else None


def last_error(log: Path) -> str:
    """The log's last line that reads as an error, else its last message of the project's own
    (worldsmith: ..., error: ...), else its last line."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    for test in (_ERROR.search, lambda line: line.startswith(("worldsmith:", "error:")), bool):
        found = [line for line in lines if test(line)]
        if found:
            return found[-1]
    return "(no output)"


@dataclass
class Job:
    name: str
    log: Path
    process: subprocess.Popen | None = None
    started: float = 0.0
    seconds: float = 0.0
    stage: str = "queued"
    code: int | None = None
    _read: int = field(default=0, repr=False)

    def new_stage(self) -> str | None:
        """The stage its log has reached since last asked, when it changed."""
        with self.log.open("rb") as handle:
            handle.seek(self._read)
            text = handle.read().decode(errors="replace")
        cut = text.rfind("\n") + 1  # a line still being written is read next time
        self._read += len(text[:cut].encode())
        stages = [s for s in map(stage_of, re.split(r"[\r\n]", text[:cut])) if s]
        if stages and stages[-1] != self.stage:
            self.stage = stages[-1]
            return self.stage
        return None


def start_local(command: list[str], log: Path) -> subprocess.Popen:
    """A domain's process on this machine, its output in `log`."""
    with log.open("w") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def run_all(names: list[str], command: Callable[[str], list[str]], jobs: int, logs: Path,
            say: Callable[[str], None] = print, start: Callable[[list[str], Path], object] = start_local) -> list[Job]:
    """Run `command(name)` for every domain, `jobs` at once, each started by `start(command, log)`
    (a local process, or a Ray task: pipeline.universe_ray); returns every job, finished."""
    logs.mkdir(parents=True, exist_ok=True)
    queue = [Job(name, logs / f"{name}.log") for name in names]
    waiting, running, done = list(queue), [], []
    began = time.monotonic()

    def line(job: Job, what: str) -> None:
        say(f"[{time.monotonic() - began:7.1f}s] {job.name}: {what}")

    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                job = waiting.pop(0)
                job.process = start(command(job.name), job.log)
                job.started, job.stage = time.monotonic(), "started"
                running.append(job)
                line(job, f"started (log {job.log})")
            time.sleep(POLL_S)
            for job in list(running):
                stage = job.new_stage()
                if stage:
                    line(job, f"{stage} ({time.monotonic() - job.started:.1f}s)")
                job.code = job.process.poll()
                if job.code is not None:
                    job.seconds = time.monotonic() - job.started
                    running.remove(job)
                    done.append(job)
                    line(job, f"{'passed' if job.code == 0 else f'FAILED (exit {job.code})'} in {job.seconds:.1f}s")
    finally:
        for job in running:  # interrupted: stop only the processes this run started
            job.process.terminate()
            job.process.wait()
    return sorted(done, key=lambda j: names.index(j.name))


def summary(jobs: list[Job]) -> str:
    """The table of what passed and what failed."""
    rows = [("domain", "result", "seconds", "log", "last error")]
    for job in jobs:
        failed = job.code != 0
        rows.append((job.name, f"FAILED ({job.code})" if failed else "passed", f"{job.seconds:.1f}", str(job.log),
                     last_error(job.log) if failed else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)) + "  " + row[4]
             for row in rows]
    passed = sum(1 for job in jobs if job.code == 0)
    return "\n".join([*(line.rstrip() for line in lines), f"{passed} of {len(jobs)} domains passed"])


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python -m pipeline.universe", description=__doc__.split("\n\n")[1])
    parser.add_argument("names", nargs="?", default=registry.ALL,
                        help="domains: names separated by commas, a set (set_a, set_b) or all (default)")
    parser.add_argument("--run", choices=RUNS, default="build", help="what to run for each domain (default build)")
    parser.add_argument("--model", help="litellm model string; without it every domain replays its transcript")
    parser.add_argument("--jobs", type=int,
                        help="domains at once (default: half the cores, at least 1; with --ray every domain)")
    parser.add_argument("--logs", type=Path, help="folder for the logs (default runs/universe/<run>)")
    parser.add_argument("--ray", action="store_true",
                        help="run each domain as a Ray task (a CPU each): on the cluster RAY_ADDRESS names, else "
                             "on an embedded local Ray; --jobs then defaults to every domain at once")
    args = parser.parse_args(argv)
    try:
        names = registry.expand(args.names)
    except LookupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if len(names) == 1 and args.logs is None and not args.ray:  # one domain: its own output, as it comes
        return subprocess.run(command_for(args.run, names[0], args.model, extra)).returncode
    logs = args.logs or Path("runs") / "universe" / args.run
    start, jobs = start_local, max(1, args.jobs or (os.cpu_count() or 2) // 2)
    if args.ray:
        from pipeline.universe_ray import starter

        start, jobs = starter(), max(1, args.jobs or len(names))
    print(f"{args.run}: {len(names)} domain{'s' * (len(names) != 1)} ({', '.join(names)}), {jobs} at once"
          f"{' as Ray tasks' if args.ray else ''}; logs in {logs}", file=sys.stderr)
    jobs = run_all(names, lambda name: command_for(args.run, name, args.model, extra), jobs, logs,
                   say=lambda text: print(text, file=sys.stderr, flush=True), start=start)
    print(summary(jobs), file=sys.stderr)
    return 0 if all(job.code == 0 for job in jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
