"""`python -m pipeline.author NAME ANSWERS.json... [--no-graph]`: record a transcript from hand-written answers.

For bundled domains and fixtures: the answers (step key → answer object, or a string for a
deliberately malformed answer) are served by a scripted model, on top of the answers already
in the domain's transcript, and the whole pipeline runs as it would against a real model:
prompts are hashed, tokens counted offline, and the tool code is judged in the sandbox.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agents.build import Run
from domains import registry
from domains.spec import valid_name
from llm import LLM, ScriptedBackend, Transcript
from pipeline.run import build_domain, task_stage


def main(argv: list[str]) -> int:
    if len(argv) < 1 or not valid_name(argv[0]):
        print(__doc__, file=sys.stderr)
        return 2
    with_graph = "--no-graph" not in argv
    name, *files = [a for a in argv if a != "--no-graph"]
    out = registry.folder(name)
    transcript = Transcript(out / "transcript.jsonl")
    answers: dict = {key: entry["response"] for key, entry in transcript.entries.items()}
    for file in files:
        answers.update(json.loads(Path(file).read_text()))
    backend = ScriptedBackend(answers)
    backend.model = "authored"
    transcript.clear()
    gate = 2 if any(key.startswith("mutants/") for key in answers) else 0  # the mutation gate, when scripted
    with_policy = any(key.startswith("policy/") for key in answers)  # the policy step, when scripted
    code = build_domain(Run(name, out, LLM(backend, transcript), mutation_rounds=gate, with_policy=with_policy),
                        fresh=True, with_graph=with_graph)
    if code == 0 and with_graph:
        code = task_stage(name, None)  # the recorded task stage, so report.json keeps its tasks
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
