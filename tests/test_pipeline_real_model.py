"""The real-model path of the whole pipeline, against the recorded job_seeking transcript served as
an OpenAI-compatible endpoint (tests/support/transcript_endpoint.py), once per way real models and servers
answer. Each test runs what a user runs,

    python -m pipeline job_seeking --model openai/recorded --out DIR --no-graph

with API_BASE pointing at the endpoint, and asserts the outcome the user should get: the bundled
domain's verified tools, byte for byte, where the behaviour is recoverable; a clear non-zero exit
where it is not. A last test kills runs (SIGINT, SIGTERM, SIGKILL) and resumes them.

    .venv/bin/python -m pytest tests/test_pipeline_real_model.py
"""

from __future__ import annotations

import inspect
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from agents.code_agent import code_groups
from domains.spec import DomainSpec
from llm import LLM, LiteLLMBackend, StepKey
from tests.support.transcript_endpoint import JOB_SEEKING, Behaviour, Steps, TranscriptEndpoint

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = JOB_SEEKING.parent
TOOLS = json.loads((BUNDLED / "report.json").read_text())["tools"]
RETRIES = inspect.signature(LiteLLMBackend).parameters["retries"].default  # retries after the first request
TURNS = inspect.signature(LLM).parameters["max_reasks"].default + 1  # tries of a step
MAX_TOKENS = 4000
TIMEOUT = 4  # seconds per request where a stall is injected (the stall is longer)
DROPPED_TOOL = "add_application_note"  # its group's code step never gets an answer in the 500 case
# Each test runs the whole pipeline on job_seeking in a child process, against a local endpoint: about
# three minutes a run on a loaded 2-core machine, and the last test runs it several times.
pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(900)]


def recorded() -> tuple[Counter, Counter]:
    """Requests a clean run makes: per step (its recorded turns) and per "step#turn". The graph
    step is not asked with --no-graph."""
    turns: Counter = Counter()
    for line in JOB_SEEKING.read_text().splitlines():
        entry = json.loads(line)
        if entry["stage"] != "graph":
            turns[f"{entry['stage']}/{entry['item']}/{entry['attempt']}"] += 1
    by_turn = Counter({f"{step}#{n}": 1 for step, count in turns.items() for n in range(count)})
    return turns, by_turn


STEPS, BY_TURN = recorded()
GROUPS = code_groups(DomainSpec.model_validate_json((BUNDLED / "spec.json").read_text()))


def code_step(tool: str) -> str:
    """The code step of the request that implements `tool` (with the other tools of its group)."""
    return str(StepKey.batch("code", next(names for names in GROUPS if tool in names)))


DROPPED = next(names for names in GROUPS if DROPPED_TOOL in names)  # the tools of that code step
DROPPED_STEP = code_step(DROPPED_TOOL)
PROSE_STEP = next(step for step, turns in STEPS.items() if step.startswith("code/") and turns > 1)  # re-asked


def run_agents(endpoint: TranscriptEndpoint, out: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(command(out), cwd=ROOT, env=environment(endpoint, **env), capture_output=True, text=True,
                          timeout=900)


def command(out: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline", "job_seeking", "--model", "openai/recorded", "--out", str(out),
            "--no-graph"]


def environment(endpoint: TranscriptEndpoint, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORLDSMITH_", "API_BASE", "OPENAI_"))}
    env.update(HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", API_BASE=endpoint.url, OPENAI_API_KEY="x",
               WORLDSMITH_MAX_TOKENS=str(MAX_TOKENS), WORLDSMITH_BACKOFF="0.05", **extra)
    return env


def blocks(tools_py: str) -> dict[str, str]:
    """tools.py's code per tool (the `# tool: NAME` blocks)."""
    parts = tools_py.split("\n# tool: ")[1:]
    return {part.split("\n", 1)[0]: part.split("\n", 1)[1] for part in parts}


def assert_bundled_tools(out: Path, verified: list[str] = TOOLS["verified"], tabs: bool = False) -> None:
    """The run wrote the bundled domain's tools: the same verified list, the same code and tests."""
    tools = json.loads((out / "report.json").read_text())["tools"]
    assert tools["verified"] == verified
    bundled = (BUNDLED / "tools.py").read_text()
    written = (out / "tools.py").read_text()
    if tabs:  # the model indented with tabs: the code is as it wrote it, line ends normalised
        assert "\r" not in written and "\t" in written
        written = written.replace("\t", "    ")
    if verified == TOOLS["verified"]:
        assert written == bundled
    else:
        assert blocks(written) == {n: b for n, b in blocks(bundled).items() if n in verified}
    for name in verified:
        assert (out / "tests" / f"{name}.json").read_bytes() == (BUNDLED / "tests" / f"{name}.json").read_bytes()
    assert (out / "db.py").read_bytes() == (BUNDLED / "db.py").read_bytes()


def assert_sane(endpoint: TranscriptEndpoint, result: subprocess.CompletedProcess) -> None:
    """What holds for every run: every prompt was a recorded step, no step asked more than the
    retry and re-ask limits, and nothing reached the user as a traceback."""
    assert endpoint.unknown == [], f"prompts the recorded transcript does not have: {endpoint.unknown[:3]}"
    assert max(endpoint.by_turn.values()) <= RETRIES + 1
    assert max(Counter(k.split("#")[0] for k in endpoint.by_turn).values()) <= TURNS
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stdout == ""  # litellm's "Give Feedback / Get Help" banners are off


def one_step_more(endpoint: TranscriptEndpoint) -> None:
    """Each step was asked once more than recorded (one re-ask), and the re-ask was answered."""
    assert endpoint.by_step == Counter({step: turns + 1 for step, turns in STEPS.items()})


# -- recoverable: the same 33 tools, byte for byte ----------------------------------------------

def _prose(endpoint):
    assert endpoint.by_turn == BY_TURN  # read as they come: no re-ask, no retry


def _tool_call(endpoint):
    assert endpoint.by_turn == BY_TURN
    assert {r["way"] for r in endpoint.log} == {"json"}  # not forced: the content was empty


def _control(endpoint):
    assert endpoint.by_turn == BY_TURN
    assert endpoint.normalised > 0  # the debug prompts carried the tab-indented code back


def _extra_fields(endpoint):
    one_step_more(endpoint)  # answers are strict (extra="forbid"): each is re-asked with the field named
    assert all("Extra inputs are not permitted" in r["reask"] for r in endpoint.log
               if r.get("reask") and r["step"] != PROSE_STEP or r["turn"] == 2)


def _markdown(endpoint):
    one_step_more(endpoint)
    assert all("no JSON object" in r["reask"] for r in endpoint.log if r["turn"] and r["step"] in (
        "schema/-/0", "database/-/0"))


def _misspelt_fk(endpoint):
    assert endpoint.by_step == STEPS + Counter({"database/-/0": 1})
    reask = next(r["reask"] for r in endpoint.log if r["step"] == "database/-/0" and r["turn"] == 1)
    assert "references unknown column 'jo_application.application_id'" in reask


def _cap(endpoint):
    cut = sorted([DROPPED_STEP, code_step("create_job_application"), "database/-/0"])
    assert sorted(r["step"] for r in endpoint.log if r["finish_reason"] == "length") == cut
    assert endpoint.by_step == STEPS + Counter(cut)
    assert max(r["completion_tokens"] for r in endpoint.log) <= MAX_TOKENS
    assert all("cut off" in r["reask"] for r in endpoint.log if r["step"] in cut and r["turn"])


def _retry_429(endpoint):
    assert endpoint.by_turn == BY_TURN + Counter({f"{step}#0": 1 for step in STEPS})  # each step: 429, then asked again
    assert Counter(r["status"] for r in endpoint.log) == Counter({200: sum(BY_TURN.values()), 429: len(STEPS)})


STALLED = ["schema/-/0", "database/-/0", DROPPED_STEP]


def _stall(endpoint):
    assert endpoint.by_turn == BY_TURN + Counter({f"{step}#0": 1 for step in STALLED})
    assert sorted(r["step"] for r in endpoint.log if r.get("stall")) == sorted(STALLED)


def _no_response_format(endpoint):
    ways = [r["way"] for r in endpoint.log]
    assert ways[0] == "json" and endpoint.log[0]["status"] == 400  # JSON mode refused once, on the first request
    assert set(ways[1:]) == {"text"}  # then plain text for the rest of the run: no response_format again
    assert endpoint.by_turn == BY_TURN + Counter({"schema/-/0#0": 1})


RECOVERABLE = {
    "prose around the JSON": ([Behaviour("prose")], {}, _prose),
    "reasoning without its opening <think> tag": ([Behaviour("think")], {}, _prose),
    "Markdown fences": ([Behaviour("fence")], {}, _prose),
    "answer as a tool call, empty content": ([Behaviour("tool_call")], {}, _tool_call),
    "literal tabs and CRLF in JSON strings": ([Behaviour("control")], {}, _control),
    "unknown extra fields": ([Behaviour("extra_fields")], {}, _extra_fields),
    "Markdown instead of JSON once": ([Behaviour("markdown", times=1)], {}, _markdown),
    "misspelt foreign key once": ([Behaviour("misspelt_fk", Steps(("database/",)), times=1)], {}, _misspelt_fk),
    "output capped at 4,000 tokens": ([Behaviour("ramble", Steps(("database/", DROPPED_STEP[:-1],
                                                                  code_step("create_job_application")[:-1])),
                                                 value=4000)],
                                      {}, _cap),
    "429 then success": ([Behaviour("status", times=1, value=429)], {}, _retry_429),
    "stall past the timeout once": ([Behaviour("stall", Steps(tuple(s[:-1] for s in STALLED)), times=1,
                                               value=3 * TIMEOUT)], {"WORLDSMITH_TIMEOUT": str(TIMEOUT)}, _stall),
    "400 to any response_format": ([Behaviour("refuse_response_format")], {}, _no_response_format),
}


@pytest.mark.parametrize("behaviour", list(RECOVERABLE))
def test_a_recoverable_behaviour_gives_the_bundled_tools(behaviour, tmp_path):
    behaviours, env, check = RECOVERABLE[behaviour]
    with TranscriptEndpoint(behaviours, cap=MAX_TOKENS) as endpoint:
        result = run_agents(endpoint, tmp_path, **env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_sane(endpoint, result)
    assert_bundled_tools(tmp_path, tabs=behaviour.startswith("literal tabs"))
    check(endpoint)


# -- not recoverable: a clear non-zero exit ----------------------------------------------------

def test_a_500_that_never_clears_drops_those_tools_and_exits_3(tmp_path):
    with TranscriptEndpoint([Behaviour("status", Steps((DROPPED_STEP[:-1],)), value=500)]) as endpoint:
        result = run_agents(endpoint, tmp_path)
    assert result.returncode == 3, result.stderr[-3000:]
    assert_sane(endpoint, result)
    tools = json.loads((tmp_path / "report.json").read_text())["tools"]
    assert tools["dropped_model_failed"] == sorted(DROPPED)  # every tool of the request that never came
    assert_bundled_tools(tmp_path, verified=[t for t in TOOLS["verified"] if t not in DROPPED])
    assert endpoint.by_step[DROPPED_STEP] == RETRIES + 1  # the retry budget, then given up
    assert not any(k.startswith(f"tests/{t}/") for t in DROPPED for k in endpoint.by_step)  # no tests without code
    gone = {k for k in BY_TURN if k.startswith(DROPPED_STEP) or any(f"/{t}/" in k for t in DROPPED)}
    assert endpoint.by_turn == BY_TURN - Counter({k: 1 for k in gone}) + Counter({f"{DROPPED_STEP}#0": RETRIES + 1})
    said = [line for line in result.stderr.splitlines() if line.startswith("worldsmith:")]
    assert said[-1] == (f"worldsmith: {len(DROPPED)} tool(s) were dropped because the model failed, not because "
                        f"their tests did: {', '.join(sorted(DROPPED))} (report.json: tools.dropped_model_failed). "
                        f"The domain was written without them.")


@pytest.mark.parametrize("status, steps, requests", [(401, Steps(), 1), (500, Steps(("schema/-/",)), RETRIES + 1)],
                         ids=["every request 401", "the first schema step always 500"])
def test_a_stage_the_model_cannot_answer_stops_the_run_with_one_paragraph(status, steps, requests, tmp_path):
    with TranscriptEndpoint([Behaviour("status", steps, value=status)]) as endpoint:
        result = run_agents(endpoint, tmp_path)
    assert result.returncode == 1
    assert_sane(endpoint, result)
    assert endpoint.by_turn == Counter({"schema/-/0#0": requests})
    said = result.stderr.strip()
    assert said.count("\n") == 0, said  # one paragraph, nothing else
    assert said.startswith(f"worldsmith: the run stopped: schema/-/0: openai/recorded failed (HTTP {status}) after "
                           f"{requests} request{'s' if requests > 1 else ''}: ")
    assert said.endswith(f"The domain was not written; every exchange so far is in {tmp_path}/transcript.jsonl.")
    assert not (tmp_path / "report.json").exists()


# -- kill and resume -----------------------------------------------------------------------

def test_a_killed_run_resumes_without_asking_again_and_ends_with_the_same_tools(tmp_path):
    """Three runs killed at seeded random points (SIGINT, SIGTERM and SIGKILL, in a seeded order),
    each resumed by the same command; then one left to finish. The points are drawn as counts of
    answered requests, one in each third of the run, plus a random delay of up to 2 s, so that they
    land inside the run on a fast machine and a slow one alike."""
    rng = random.Random(20250214)
    kills = rng.sample([signal.SIGINT, signal.SIGTERM, signal.SIGKILL], 3)
    third = (sum(BY_TURN.values()) - 20) // 3
    points = [rng.randrange(4 + n * third, 4 + (n + 1) * third) for n in range(3)]  # one in each third
    killed, checks = [], []  # checks: (prompt hash -> step answered before a kill, requests per prompt then)
    with TranscriptEndpoint([]) as endpoint:
        env = environment(endpoint)
        for kill, point in zip(kills, points):
            run = subprocess.Popen(command(tmp_path), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
            while endpoint.answered() < point and run.poll() is None:
                time.sleep(0.02)
            time.sleep(rng.uniform(0, 2))
            assert run.poll() is None, f"the run ended before its {kill.name} at request {point}: " \
                                       f"{run.stderr.read()[-2000:]}"
            before = endpoint.answered()
            run.send_signal(kill)
            try:
                run.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                run.kill()
                raise AssertionError(f"the run did not stop within 30 s of {kill.name}") from None
            answered = [json.loads(line) for line in (tmp_path / "transcript.jsonl").read_text().splitlines()]
            killed.append((kill.name, point, run.returncode, len(answered), endpoint.answered() - before))
            assert run.returncode == -kill and answered, killed  # Ctrl-C ends the run as a kill does
            assert endpoint.answered() - before <= 2, killed  # at most the requests in flight (concurrency 2)
            checks.append(({e["prompt_sha"]: e["key"] for e in answered}, endpoint.snapshot()))
        result = run_agents(endpoint, tmp_path)
        final = endpoint.snapshot()
    assert result.returncode == 0, (killed, result.stderr[-3000:])
    assert_bundled_tools(tmp_path)
    for answered, asked in checks:  # a step on disk when a run was killed is never asked again
        again = sorted(key for sha, key in answered.items() if final[sha] != asked[sha])
        assert again == [], (killed, again)
    assert endpoint.unknown == []
    transcript = [json.loads(line) for line in (tmp_path / "transcript.jsonl").read_text().splitlines()]
    assert Counter(e["key"].split("#")[0] for e in transcript) == STEPS  # every step recorded, once per turn
