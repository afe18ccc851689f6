"""`python -m graph NAME [--model MODEL]`: build the dependency graph of a domain's verified tools.

Reads domains/NAME/spec.json and the verified tool list of domains/NAME/report.json,
writes graph.json, graph.svg and graph.md next to them and the statistics into
report.json under "graph". Without a model the refinement answers are replayed from the
domain's transcript; with one they are asked and recorded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from domains import registry
from domains.spec import IDENT_HELP, DomainSpec, valid_name
from graph.build import graph_stage
from llm import LLM, Transcript, backend_for


def run(name: str, model: str | None = None, domains: Path | None = None) -> dict:
    folder = (domains or registry.root()) / name
    spec = DomainSpec.model_validate_json((folder / "spec.json").read_text())
    verified = json.loads((folder / "report.json").read_text())["tools"]["verified"]
    transcript = Transcript(folder / "transcript.jsonl")
    llm = LLM(backend_for(model), transcript)
    started = time.perf_counter()
    print(f"graph: {name}: {len(verified)} verified tools"
          f" ({'asking ' + model if model else 'replaying the transcript'})", file=sys.stderr)
    numbers = graph_stage(folder, spec, verified, llm)
    for step in llm.changed_prompts:
        print(f"graph: warning: the prompt of {step} changed since it was recorded", file=sys.stderr)
    if not llm.replaying:
        transcript.save()
    print(f"graph: {numbers['tools']} tools, {numbers['edges']['total']} edges "
          f"(embedding {numbers['edges']['embedding']}, llm {numbers['edges']['llm']}, rule {numbers['edges']['rule']}), "
          f"{numbers['pruned']['total']} pruned, isolated: {', '.join(numbers['isolated_tools']) or 'none'} "
          f"({time.perf_counter() - started:.1f}s) -> {folder.parent.name}/{name}/graph.md", file=sys.stderr)
    return numbers


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m graph", description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--model", default=None, help="litellm model string; omit to replay the transcript")
    args = parser.parse_args()
    if not valid_name(args.name) or not (registry.folder(args.name) / "report.json").is_file():
        print(f"worldsmith: no built domain {args.name!r} ({IDENT_HELP}); run `make domain NAME=...` first",
              file=sys.stderr)
        return 2
    run(args.name, args.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
