"""The transcript store: domains/<name>/transcript.jsonl, one recorded exchange per line.

Lines are keyed by step (`stage/item/attempt`, `#turn` for re-asks) and written in a stable order,
stages in the order the pipeline runs them, so a re-recorded domain differs only where its
answers do.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import defaultdict
from pathlib import Path

from llm.steps import LLMError

# The stages in the order the pipeline runs them: the order of a transcript's lines and of its
# token report. A stage not listed sorts last.
STAGE_ORDER = {"schema": 0, "database": 1, "policy": 2, "code": 3, "tests": 4, "debug": 5, "mutants": 6, "graph": 7,
               "tasks": 8}


class Transcript:
    """domains/<name>/transcript.jsonl: one JSON object per exchange, in a stable order."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        if path.exists():
            lines = [line for line in path.read_text().splitlines() if line.strip()]
            for number, line in enumerate(lines, 1):
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    if number < len(lines):
                        raise LLMError(f"{path}: line {number} is not JSON; the transcript is damaged") from None
                    # a run killed while appending leaves its last line cut short: drop it (later lines are
                    # appended after it), and that exchange is asked again
                    print(f"worldsmith: {path}: the last line was cut short (a killed run); its exchange is "
                          f"asked again", file=sys.stderr)
                    path.write_text("".join(f"{kept}\n" for kept in lines[:-1]))
                    continue
                self.entries[entry["key"]] = entry
        self._lock = threading.Lock()

    def get(self, name: str) -> dict | None:
        return self.entries.get(name)

    def put(self, entry: dict) -> None:
        """Record an exchange and append it to the file at once, so a killed run loses at most the
        request in flight (a later line for a key replaces an earlier one when read back)."""
        with self._lock:
            self.entries[entry["key"]] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
                f.flush()
                try:
                    os.fsync(f.fileno())
                except OSError:  # not a regular file (e.g. /dev/null)
                    pass

    def clear(self) -> None:
        """Start a new recording: forget every entry, on disk too."""
        with self._lock:
            self.entries.clear()
            if self.path.exists():
                self.path.write_text("")

    def tokens(self) -> dict:
        """Prompt and completion tokens per stage and in total (the same on replay as when recorded)."""
        stages: dict[str, dict[str, int]] = defaultdict(lambda: {"prompt": 0, "completion": 0})
        for entry in self.entries.values():
            stages[entry["stage"]]["prompt"] += entry["usage"]["prompt_tokens"]
            stages[entry["stage"]]["completion"] += entry["usage"]["completion_tokens"]
        ordered = {s: stages[s] for s in sorted(stages, key=lambda s: STAGE_ORDER.get(s, 99))}
        total = {k: sum(v[k] for v in ordered.values()) for k in ("prompt", "completion")}
        total["total"] = total["prompt"] + total["completion"]
        models: dict[str, set] = defaultdict(set)
        for entry in self.entries.values():
            models[entry["stage"]].add(entry.get("model") or "")
        if len(set().union(*models.values())) > 1:  # a model per role: which answered each stage
            return {"stages": ordered, "total": total, "models": {s: sorted(models[s]) for s in ordered}}
        return {"stages": ordered, "total": total}

    def save(self) -> None:
        def order(name: str):
            stage, item, rest = name.split("/", 2)
            attempt, _, turn = rest.partition("#")
            return (STAGE_ORDER.get(stage, 99), item, int(attempt), int(turn or 0))

        lines = [json.dumps(self.entries[k], sort_keys=True) for k in sorted(self.entries, key=order)]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + ("\n" if lines else ""))
