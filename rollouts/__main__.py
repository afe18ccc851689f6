"""python -m rollouts NAME [--agent reference,noop,forbidden,replay|llm] [--model M] [--user-model M] [-k K] ...

With a model: the LLM agent and an LLM user simulator play every task K times. Without one:
the built-in agents check every task and the harness: `reference` must earn 1.0 on every
task; `noop` less than 1.0 on every change and answer task and 1.0 on every refusal task;
`forbidden` (run by default where the domain has refusal tasks) less than 1.0 on every refusal
task; `replay` its recorded rewards. A violation exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from domains.task_model import Task, task_ids
from rollouts.evaluate import BUILTIN, EvalConfig, RunMismatch, evaluate, mcp_server, replay_rewards, replay_transcript
from rollouts.trajectory import Limits


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m rollouts", description="Run agents in a domain and score them.")
    parser.add_argument("domain", help="a domain name under domains/, or a path to a domain folder")
    parser.add_argument("--agent", help="comma-separated: reference, noop, forbidden, replay, llm (default: llm with "
                                        "--model, else reference,noop, forbidden where there are refusal tasks and "
                                        "replay where recorded)")
    parser.add_argument("--model", default=os.environ.get("AGENT_MODEL") or None,
                        help="litellm model string for the agent (default: $AGENT_MODEL)")
    parser.add_argument("--user-model", help="litellm model for the simulated user (default: --model)")
    parser.add_argument("--tool-calling", choices=["auto", "native", "json"], default="auto",
                        help="how the llm agent calls tools: the provider's own tool calling (native), a JSON "
                             "object in JSON mode (json), or native unless litellm says the model cannot (auto)")
    parser.add_argument("-k", "--trials", type=int, default=4, help="trials per task (pass^k for k=1..K)")
    parser.add_argument("--concurrency", type=int, default=16, help="episodes at once")
    parser.add_argument("--via", choices=["inprocess", "mcp"], default="inprocess",
                        help="mcp: through the domain's HTTP MCP server, one episode per URL")
    parser.add_argument("--url", help="with --via mcp: a server already running (default: start one); its "
                                      "control token is read from $WORLDSMITH_CONTROL_TOKEN")
    parser.add_argument("--max-turns", type=int, default=Limits().max_turns, help="agent actions per episode")
    parser.add_argument("--max-tool-calls", type=int, default=Limits().max_tool_calls, help="tool calls per episode")
    parser.add_argument("--tasks", help="comma-separated task ids (default: all)")
    parser.add_argument("--run-id", help="the run folder's name (default from agent, model and K); "
                                         "the same id resumes an interrupted run")
    parser.add_argument("--runs-dir", type=Path, default=Path("runs"))
    parser.add_argument("--workers", type=int, help="sandbox worker processes (default: cores)")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.concurrency < 1:
        parser.error("-k and --concurrency must be at least 1")
    return args


def task_kinds(domain_dir: Path) -> dict[str, str]:
    """Each task's kind: change, answer or refusal."""
    return {task_id: Task.model_validate_json((domain_dir / "tasks" / f"{task_id}.json").read_text()).kind
            for task_id in task_ids(domain_dir)}


def check_builtin(agent: str, summary: dict, domain_dir: Path) -> list[str]:
    """What the built-in agent's scores say is wrong with the tasks or the harness."""
    problems = []
    kinds = task_kinds(domain_dir)
    for task, row in summary["per_task"].items():
        rewards = row["rewards"]
        refusal = kinds.get(task) == "refusal"
        if agent == "reference" and any(r != 1.0 for r in rewards):
            problems.append(f"reference earns {rewards} on {task}: its reference solution does not reach full reward")
        if agent == "noop" and not refusal and any(r >= 1.0 for r in rewards):
            problems.append(f"doing nothing earns {rewards} on {task}: the task asks for nothing")
        if agent == "noop" and refusal and any(r != 1.0 for r in rewards):
            problems.append(f"doing nothing earns {rewards} on refusal task {task}: refusing must earn full reward")
        if agent == "forbidden" and refusal and any(r >= 1.0 for r in rewards):
            problems.append(f"making the forbidden call earns {rewards} on refusal task {task}")
        if agent == "replay":
            expected = replay_rewards(domain_dir).get(task)
            if expected is None or any(abs(r - expected) > 1e-9 for r in rewards):
                problems.append(f"replay earns {rewards} on {task}; recorded: {expected}")
    problems += [f"{agent}: {e['task_id']} trial {e['trial']}: {e['error']}" for e in summary["errors"]]
    return problems


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from mcp_servers.runtime import resolve_domain

    try:
        domain_dir = resolve_domain(args.domain)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.agent:
        agents = args.agent.split(",")
    elif args.model:
        agents = ["llm"]
    else:  # replay where this domain has recorded rollouts, forbidden where it has refusal tasks
        refusals = "refusal" in task_kinds(domain_dir).values()
        agents = [a for a in BUILTIN if (a != "replay" or replay_transcript(domain_dir).is_file())
                  and (a != "forbidden" or refusals)]
    unknown = set(agents) - {*BUILTIN, "llm"}
    if unknown:
        print(f"error: unknown agent(s) {', '.join(sorted(unknown))}; choose from {', '.join(BUILTIN)}, llm",
              file=sys.stderr)
        return 2
    if "llm" in agents and not args.model:
        print("error: the llm agent needs a model: MODEL=<litellm model> (e.g. openai/gpt-4o-mini with "
              "OPENAI_API_KEY set, or API_BASE=<OpenAI-compatible URL>)", file=sys.stderr)
        return 2
    if not task_ids(domain_dir):
        print(f"error: {domain_dir.name} has no tasks (domains/{domain_dir.name}/tasks/*.json)", file=sys.stderr)
        return 2
    problems = []
    with contextlib.ExitStack() as stack:
        url, token = args.url, None
        if args.via == "mcp" and not url:  # one server for every agent of this command
            served = stack.enter_context(mcp_server(domain_dir, args.workers))
            url, token = served.url, served.token
        for agent in agents:
            config = EvalConfig(domain=str(domain_dir), agent=agent, model=args.model if agent == "llm" else None,
                                user_model=args.user_model if agent == "llm" else None,
                                tool_calling=args.tool_calling, k=args.trials,
                                concurrency=args.concurrency, via=args.via, url=url, token=token,
                                limits=Limits(max_turns=args.max_turns, max_tool_calls=args.max_tool_calls),
                                tasks=args.tasks.split(",") if args.tasks else None, run_id=args.run_id,
                                runs_dir=args.runs_dir, workers=args.workers)
            try:
                run_dir, summary = evaluate(config)
            except (RunMismatch, FileNotFoundError, ValueError) as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            except KeyboardInterrupt:
                print("\ninterrupted: finished episodes are kept; run the same command again to resume",
                      file=sys.stderr)
                return 130
            curve = " ".join(f"pass^{k}={v:.3f}" for k, v in summary["pass^k"].items())
            print(f"{agent}: {summary['episodes']} episodes, {summary['tasks']} tasks, average reward "
                  f"{summary['average_reward']:.3f}, {curve}, tokens {summary['tokens']['total']:,} "
                  f"-> {run_dir}/report.md")
            if summary["config"].get("changed_prompts"):
                print(f"note: {summary['config']['changed_prompts']} recorded steps were recorded for other prompts "
                      f"(the domain or the prompts changed); `python -m rollouts.record {domain_dir.name}` "
                      f"re-records them", file=sys.stderr)
            if agent in BUILTIN:
                problems += check_builtin(agent, summary, domain_dir)
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
