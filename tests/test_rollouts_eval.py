"""Runs of many episodes: the offline built-in agents, resume, replay, and a real model over MCP HTTP."""

from __future__ import annotations

import asyncio
import json

import pytest

from llm import LLM, ScriptedBackend, Transcript, prompt_hash
from rollouts import STOP, LLMAgent, LLMUser, run_episode
from rollouts.__main__ import main
from rollouts.evaluate import EvalConfig, RunMismatch, evaluate, mcp_server, replay_transcript
from rollouts.record import record
from rollouts.sessions import MCPSession, read_policy
from tests.support.rollouts_endpoint import RecordedEndpoint
from tests.support.rollouts_tasks import TASKS, WITHDRAW, write_domain

# the LLM agent misses the second of the two changes: partial credit
SHOPIFY_PARTIAL = {
    "user/shopify_follow_up@0/0": {"message": "Hi! For my Shopify Platform Engineer application, please add a "
                                              "follow-up note 'Email the recruiter on March 10' and set its priority to 5."},
    "agent/shopify_follow_up@0/0": {"tool_calls": [{"name": "search_apps_by_keyword", "arguments": {"keyword": "Shopify"}}]},
    "agent/shopify_follow_up@0/1": {"tool_calls": [{"name": "add_application_note", "arguments": {
        "application_id": "APP-0003", "note_content": "Email the recruiter on March 10", "note_type": "follow_up"}}]},
    "agent/shopify_follow_up@0/2": {"content": "I added the follow-up note to your Shopify application."},
    "user/shopify_follow_up@0/1": {"message": STOP},
}


@pytest.fixture
def domain(tmp_path):
    return write_domain(tmp_path / "domains")


def lines(path):
    return path.read_text().splitlines()


@pytest.mark.slow
def test_offline_builtin_agents_check_every_task(domain, tmp_path, capsys):
    assert main([str(domain), "-k", "2", "--concurrency", "4", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "reference: 6 episodes, 3 tasks, average reward 1.000" in out and "noop: 6 episodes" in out
    run = tmp_path / "runs" / "job_seeking" / "reference-k2"
    records = [json.loads(line) for line in lines(run / "trajectories.jsonl")]
    assert sorted((r["task_id"], r["trial"]) for r in records) == [(t, i) for t in sorted(TASKS) for i in range(2)]
    report = json.loads((run / "report.json").read_text())
    assert report["pass^k"] == {"1": 1.0, "2": 1.0} and "C(c, k) / C(n, k)" in report["convention"]
    assert (run / "pass_k.svg").read_text().startswith("<?xml") and (run / "rewards.svg").is_file()
    assert "| withdraw_figma_infra | 2 | 2 | 1.000 |" in (run / "report.md").read_text()
    noop = json.loads((tmp_path / "runs" / "job_seeking" / "noop-k2" / "report.json").read_text())
    assert noop["average_reward"] < 1.0 and noop["pass@k"]["2"] == 0.0


@pytest.mark.slow
def test_a_task_whose_reference_fails_or_that_asks_for_nothing_fails_the_check(tmp_path, capsys):
    nothing = {"instruction": "Just look at my applications.", "reference_solution": [
        {"tool": "list_applications", "arguments": {}}]}
    domain = write_domain(tmp_path / "domains", {**TASKS, "asks_nothing": nothing})
    assert main([str(domain), "-k", "1", "--runs-dir", str(tmp_path / "runs")]) == 1
    assert "doing nothing earns [1.0] on asks_nothing" in capsys.readouterr().err


@pytest.mark.slow
def test_an_interrupted_run_resumes_without_rerunning_finished_episodes(domain, tmp_path):
    config = EvalConfig(domain=str(domain), agent="reference", k=3, concurrency=2, runs_dir=tmp_path / "runs")
    run_dir, _ = evaluate(config)
    path = run_dir / "trajectories.jsonl"
    kept = lines(path)[:4]
    path.write_text("\n".join(kept) + "\n" + kept[4 - 1][:50])  # interrupted mid-write
    _, summary = evaluate(config)
    after = lines(path)
    assert after[:4] == kept  # the finished episodes were not run again
    assert len(after) == 9 and summary["episodes"] == 9
    assert len({(json.loads(x)["task_id"], json.loads(x)["trial"]) for x in after}) == 9
    with pytest.raises(RunMismatch):
        evaluate(EvalConfig(domain=str(domain), agent="reference", k=3, runs_dir=tmp_path / "runs",
                            run_id=run_dir.name, via="mcp"))


@pytest.mark.slow
def test_replay_matches_recorded_rewards_and_a_broken_recording_errs_one_episode_only(domain, tmp_path, capsys):
    rewards = record(domain, {**WITHDRAW, **SHOPIFY_PARTIAL})
    assert rewards["withdraw_figma_infra"] == 1.0 and 0.0 < rewards["shopify_follow_up"] < 1.0
    assert main([str(domain), "-k", "2", "--runs-dir", str(tmp_path / "runs")]) == 0
    assert "replay: 4 episodes, 2 tasks" in capsys.readouterr().out
    # a recording that lost one answer: that episode ends with the error, the others run
    transcript = Transcript(replay_transcript(domain))
    del transcript.entries["agent/withdraw_figma_infra@0/2"]
    transcript.save()
    run_dir, summary = evaluate(EvalConfig(domain=str(domain), agent="replay", k=1, runs_dir=tmp_path / "again"))
    assert summary["episodes"] == 2 and summary["per_task"]["shopify_follow_up"]["errors"] == 0
    assert "agent/withdraw_figma_infra@0/2" in summary["errors"][0]["error"]


def test_the_bundled_job_seeking_recordings_replay_to_their_rewards(tmp_path, capsys):
    # the authored recordings hold a full success, a partial one and failures: replay must earn each again
    assert main(["job_seeking", "--agent", "replay", "-k", "1", "--runs-dir", str(tmp_path / "runs")]) == 0
    report = json.loads((tmp_path / "runs" / "job_seeking" / "replay-k1" / "report.json").read_text())
    rewards = {task: row["rewards"][0] for task, row in report["per_task"].items()}
    assert 1.0 in rewards.values() and 0.0 in rewards.values()
    assert any(0.0 < r < 1.0 for r in rewards.values()) and report["errors"] == []
    # pass^k per complexity level and per task kind, and the per-level bars beside the report
    levels = report["by_level"]
    assert sum(row["tasks"] for row in levels.values()) == len(rewards) and set(levels) <= {"1", "2", "3"}
    assert report["by_kind"]["conversational"]["pass^k"] == {"1": 0.0}  # task_002 is a new application without an email
    assert sum(row["tasks"] for row in report["by_kind"].values()) == len(rewards)
    run = tmp_path / "runs" / "job_seeking" / "replay-k1"
    assert (run / "levels.svg").read_text().startswith("<?xml")
    assert "### pass^k by complexity level" in (run / "report.md").read_text()


class Capturing(ScriptedBackend):
    """Scripted answers, remembered by prompt for the recorded-answer endpoint."""

    def __init__(self, answers):
        super().__init__(answers)
        self.by_prompt: dict[str, str] = {}

    def complete(self, key, turn, messages, **kwargs):
        text, usage = super().complete(key, turn, messages, **kwargs)
        self.by_prompt[prompt_hash(messages, kwargs.get("tools"))] = text
        return text, usage


@pytest.mark.slow
@pytest.mark.integration
def test_a_real_model_agent_and_user_through_litellm_over_mcp_http(domain, tmp_path, monkeypatch):
    backend = Capturing(WITHDRAW)
    llm = LLM(backend, Transcript(tmp_path / "scripted.jsonl"))

    async def scripted(served):
        # the policy `make eval` gives the agent (policy.md, which MCPSession ends with the episode's date)
        session = await MCPSession.open(served.url, "withdraw_figma_infra", policy=read_policy(domain),
                                        token=served.token)
        try:
            return await run_episode(session, LLMAgent(llm), LLMUser(llm, "job_seeking"))
        finally:
            await session.close()

    with mcp_server(domain, workers=1) as served:
        expected = asyncio.run(scripted(served))
    assert expected.reward == 1.0

    with RecordedEndpoint(backend.by_prompt) as endpoint:
        monkeypatch.setenv("API_BASE", endpoint.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-recorded")
        run_dir, summary = evaluate(EvalConfig(domain=str(domain), model="openai/recorded-model", k=1, via="mcp",
                                               tasks=["withdraw_figma_infra"], runs_dir=tmp_path / "runs",
                                               workers=1))
    assert len(endpoint.requests) == len(WITHDRAW)  # every agent and user turn went over HTTP
    assert summary["average_reward"] == 1.0 and summary["terminations"] == {"user_stop": 1}
    (trajectory,) = [json.loads(line) for line in lines(run_dir / "trajectories.jsonl")]
    assert trajectory["messages"] == expected.model_dump(mode="json")["messages"]
    assert trajectory["tokens"]["agent"]["prompt"] > 0 and trajectory["tokens"]["user"]["completion"] > 0
    recorded = Transcript(run_dir / "transcript.jsonl")
    assert {e["model"] for e in recorded.entries.values()} == {"openai/recorded-model"}
    assert len(recorded.entries) == len(WITHDRAW)
