"""Record the replay rollouts of a domain: domains/<name>/rollouts/{transcript.jsonl, rewards.json}.

    python -m rollouts.record NAME [--answers FILE]

The answers (step key → the model's answer, e.g. "agent/<task>@0/1" → {"tool_calls": [...]})
come from FILE, or from the current transcript so that changed prompts are re-recorded with the
same answers. Every task the answers name is played once by the LLM agent and the LLM user
through the gateway; the transcript and each task's reward are written for `replay` to match.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from llm import LLM, ScriptedBackend, Transcript
from mcp_servers.runtime import Environment, resolve_domain
from rollouts.agents import LLMAgent
from rollouts.episode import arun_task
from rollouts.evaluate import replay_transcript
from rollouts.user import LLMUser


def recorded_answers(transcript: Transcript) -> dict[str, str]:
    return {key: entry["response"] for key, entry in transcript.entries.items()}


def record(domain: str | Path, answers: dict) -> dict[str, float]:
    """Play every task the answers name; write the transcript and rewards; return the rewards."""
    domain_dir = resolve_domain(domain)
    path = replay_transcript(domain_dir)
    recording = path.with_suffix(".recording")
    recording.unlink(missing_ok=True)
    transcript = Transcript(recording)
    llm = LLM(ScriptedBackend(answers), transcript)
    tasks = sorted({key.split("/")[1].rsplit("@", 1)[0] for key in answers})

    async def play(env: Environment) -> list:
        return list(await asyncio.gather(*(arun_task(env, task, LLMAgent(llm), LLMUser(llm, domain_dir.name))
                                           for task in tasks)))

    with Environment(domain_dir, workers=1) as env:
        trajectories = asyncio.run(play(env))
    failed = [f"{t.task_id}: {t.error}" for t in trajectories if t.error]
    if failed:
        raise RuntimeError("recording failed:\n" + "\n".join(failed))
    transcript.path = path
    transcript.save()
    recording.unlink(missing_ok=True)
    rewards = {t.task_id: t.reward for t in trajectories}
    (path.parent / "rewards.json").write_text(json.dumps(rewards, indent=1, sort_keys=True) + "\n")
    return rewards


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rollouts.record", description=__doc__.splitlines()[0])
    parser.add_argument("domain")
    parser.add_argument("--answers", type=Path, help="JSON object: step key -> answer (default: the current transcript's)")
    args = parser.parse_args(argv)
    domain_dir = resolve_domain(args.domain)
    answers = (json.loads(args.answers.read_text()) if args.answers
               else recorded_answers(Transcript(replay_transcript(domain_dir))))
    if not answers:
        print("error: no answers to record", file=sys.stderr)
        return 2
    for task, reward in record(domain_dir, answers).items():
        print(f"{task}: reward {reward:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
