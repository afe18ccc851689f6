"""`python -m pipeline NAME [--model MODEL]`: build a domain universe (what `make domain` runs).

The verified tools, the tool graph, the report page and the tasks, in that order (pipeline/run.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.build import Run, checkpoint_path
from domains import registry
from domains.spec import IDENT_HELP, valid_name
from llm import LLM, Transcript, backend_for
from pipeline.run import build_domain, task_stage

NO_MODEL = """worldsmith: there is no recorded transcript for the domain {name!r}, and no model is configured
to synthesize it. Set MODEL to any litellm model string and the key its provider needs, for example
`make domain NAME={name} MODEL=openai/gpt-4.1` with OPENAI_API_KEY set, `MODEL=anthropic/claude-sonnet-4-5`
with ANTHROPIC_API_KEY, `MODEL=ollama/qwen3:32b` for a local Ollama, or `MODEL=openai/<model>` with
API_BASE=http://host:port/v1 for any OpenAI-compatible server. Every exchange is recorded to
domains/{name}/transcript.jsonl, so later runs replay offline."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    parser.add_argument("name", help="domain keyword, a snake_case identifier such as job_seeking")
    parser.add_argument("--model", default=None, help="litellm model string; without it the transcript is replayed")
    parser.add_argument("--concurrency", type=int, default=2, help="tools built at once (default 2)")
    parser.add_argument("--fresh", action="store_true", help="ignore an interrupted run's checkpoint")
    parser.add_argument("--no-graph", action="store_true", help="stop after the verified tools (no graph, no tasks)")
    parser.add_argument("--mutation-rounds", type=int, default=None,
                        help="mutation-gate requests per verified tool (default 2 with a model, or when the "
                             "replayed transcript recorded the gate; 0 turns it off)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the domain (and its transcript) here instead of domains/NAME")
    args = parser.parse_args(argv)

    if not valid_name(args.name):
        print(f"worldsmith: {args.name!r} is not a valid domain name: {IDENT_HELP}", file=sys.stderr)
        return 2
    out = args.out.resolve() if args.out else registry.folder(args.name)
    transcript_path = out / "transcript.jsonl"
    if not args.model and not transcript_path.exists():
        print(NO_MODEL.format(name=args.name), file=sys.stderr)
        return 2

    transcript = Transcript(transcript_path)
    if args.model and not checkpoint_path(out).exists():
        transcript.clear()  # a new recording replaces the old one
    llm = LLM(backend_for(args.model), transcript)
    gate = args.mutation_rounds
    if gate is None:
        gate = 2 if args.model or any(k.startswith("mutants/") for k in transcript.entries) else 0
    # the policy step runs with a model, and on replay when the transcript recorded it
    with_policy = bool(args.model) or any(k.startswith("policy/") for k in transcript.entries)
    code = build_domain(Run(args.name, out, llm, concurrency=args.concurrency, mutation_rounds=gate,
                            with_policy=with_policy), args.fresh, with_graph=not args.no_graph)
    if code == 0 and not args.no_graph:
        if out != registry.folder(args.name):  # the task stage reads and writes domains/NAME only
            print(f"worldsmith: task stage skipped: it runs on domains/{args.name}/, not {out}", file=sys.stderr)
            return code
        code = task_stage(args.name, args.model)
    return code


if __name__ == "__main__":
    import signal

    # Ctrl-C ends the run at once, as a kill does. Raised as KeyboardInterrupt it reached the main
    # thread only after a tool build finished, and the interpreter then waited for the worker
    # threads, which went on asking the model for every queued tool. Every answer so far is on
    # disk and the same command resumes from the checkpoint.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main())
