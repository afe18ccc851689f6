"""The in-process runtime: isolated episodes, atomic calls, fast resets, limits and rewards."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from mcp_servers.runtime import Environment, EpisodeError, RewardUnavailable, UnknownTask
from mcp_servers.sample_state import build_sample_state
from tests.support.fixture_domain import DUNE, EMMA

RESERVED = {"reset", "step", "state", "close"}


@pytest.fixture(scope="module")
def env(fixture_domain):
    with Environment(fixture_domain, call_timeout=0.5) as environment:
        yield environment


def titles(episode) -> list[str]:
    return [b["title"] for b in episode.state()["book"]]


def test_tools_are_the_verified_ones_as_openai_functions(env):
    tools = env.openai_tools()
    names = [t["function"]["name"] for t in tools]
    assert names == ["add_book", "add_then_fail", "add_then_hang", "add_then_stall", "export_list", "get_book",
                     "mark_read", "remove_book"]
    assert not RESERVED & set(names)
    add_book = tools[0]
    assert add_book["type"] == "function"
    params = add_book["function"]["parameters"]
    assert params["required"] == ["title", "author"]
    assert params["properties"]["pages"] == {"type": "integer", "description": "Page count"}
    assert params["additionalProperties"] is False


def test_an_episode_without_a_task_serves_the_sample_state(env, fixture_domain):
    with env.create_episode() as episode:
        assert episode.task is None
        assert episode.state() == json.loads(json.dumps(build_sample_state(fixture_domain)))
        assert episode.state()["book"] == [DUNE]


def test_a_task_episode_starts_from_its_initial_state_and_calls_commit(env):
    with env.create_episode("finish_dune") as episode:
        assert episode.state() == {"book": [DUNE, EMMA]}
        out = episode.call("mark_read", {"book_id": "BK-0001"})
        assert out.ok and out.result == {"book_id": "BK-0001", "status": "read"}
        assert json.loads(out.text) == out.result
        assert episode.state()["book"][0]["status"] == "read"
        assert episode.calls == 1


def test_two_episodes_of_one_task_never_see_each_others_writes(env):
    a, b = env.create_episode("finish_dune"), env.create_episode("finish_dune")
    try:
        assert a.call("add_book", {"title": "Only in A", "author": "X"}).ok
        assert b.call("remove_book", {"book_id": "BK-0002"}).ok
        assert titles(a) == ["Dune", "Emma", "Only in A"]
        assert titles(b) == ["Dune"]
    finally:
        a.close()
        b.close()


def test_concurrent_episodes_stay_isolated(env):
    episodes = [env.create_episode("finish_dune") for _ in range(12)]

    def work(n: int) -> list[str]:
        episode = episodes[n]
        for i in range(6):
            out = episode.call("add_book", {"title": f"ep{n}-book{i}", "author": "A"})
            assert out.ok, out.text
        return titles(episode)

    try:
        with ThreadPoolExecutor(12) as threads:
            results = list(threads.map(work, range(12)))
        for n, seen in enumerate(results):
            assert seen == ["Dune", "Emma"] + [f"ep{n}-book{i}" for i in range(6)]
    finally:
        for episode in episodes:
            episode.close()


def test_concurrent_calls_into_one_episode_are_serialized(env):
    with env.create_episode("finish_dune") as episode:
        with ThreadPoolExecutor(8) as threads:
            outs = list(threads.map(lambda i: episode.call("add_book", {"title": f"t{i}", "author": "A"}), range(16)))
        assert all(o.ok for o in outs)
        ids = sorted(o.result["book_id"] for o in outs)
        assert ids == [f"BK-{n:04d}" for n in range(3, 19)]  # no two calls saw the same next id
        assert len(episode.state()["book"]) == 18


def test_a_raising_tool_leaves_the_state_unchanged(env):
    with env.create_episode("finish_dune") as episode:
        assert episode.call("mark_read", {"book_id": "BK-0001"}).ok
        before = episode.state()
        out = episode.call("add_then_fail", {"title": "Ghost"})
        assert not out.ok and out.error_type == "InvalidInput"
        assert out.error == "refused after writing"
        assert out.text == "Error (InvalidInput): refused after writing"
        assert episode.state() == before


def test_a_hanging_tool_times_out_and_leaves_the_state_unchanged(env):
    with env.create_episode("finish_dune") as episode:
        assert episode.call("mark_read", {"book_id": "BK-0001"}).ok
        before = episode.state()
        # the sandbox's 0.5 s limit ends the call; one that never returned would meet the test's own timeout
        out = episode.call("add_then_hang", {"title": "Ghost"})
        assert not out.ok and out.error_type == "Timeout"
        assert "0.5 s" in out.error
        assert episode.state() == before
        assert episode.call("add_book", {"title": "After", "author": "A"}).ok


@pytest.mark.slow
def test_a_tool_that_swallows_the_alarm_is_killed_and_every_episode_keeps_its_state(env):
    episodes = [env.create_episode("finish_dune") for _ in range(4)]  # one process each
    try:
        for n, episode in enumerate(episodes):
            assert episode.call("add_book", {"title": f"kept-{n}", "author": "A"}).ok
        expected = [episode.state() for episode in episodes]
        kills = env.pool.restarts
        out = episodes[0].call("add_then_stall", {"title": "Ghost"})
        assert not out.ok and out.error_type == "Timeout"
        assert "was stopped" in out.error
        assert env.pool.restarts == kills + 1
        assert [episode.state() for episode in episodes] == expected
        for n, episode in enumerate(episodes):  # and the restored episodes go on working
            assert episode.call("add_book", {"title": f"after-{n}", "author": "A"}).ok
            assert titles(episode)[-2:] == [f"kept-{n}", f"after-{n}"]
    finally:
        for episode in episodes:
            episode.close()


def test_bad_input_is_refused_with_clear_errors(env):
    with env.create_episode("finish_dune") as episode:
        before = episode.state()
        cases = {
            ("no_such_tool", '{}'): ("UnknownTool", "unknown tool 'no_such_tool'; the tools are: add_book"),
            ("add_book", '{"title": "T"}'): ("InvalidArguments", "missing required argument 'author'"),
            ("add_book", '{"title": 5, "author": "A"}'): ("InvalidArguments",
                                                          "argument 'title' must be a string, got an integer"),
            ("add_book", '{"title": "T", "author": "A", "pages": "300"}'): (
                "InvalidArguments", "argument 'pages' must be an integer, got a string"),
            ("add_book", '{"title": "T", "author": "A", "pages": true}'): (
                "InvalidArguments", "argument 'pages' must be an integer, got a boolean"),
            ("add_book", '{"title": "T", "author": "A", "isbn": "1"}'): (
                "InvalidArguments", "unknown argument 'isbn' (arguments: title, author, pages)"),
            ("add_book", '["T", "A"]'): ("InvalidArguments", "arguments must be an object"),
        }
        for (tool, arguments), (kind, message) in cases.items():
            out = episode.call(tool, json.loads(arguments))
            assert not out.ok and out.error_type == kind, (tool, arguments, out)
            assert message in out.error, (tool, arguments, out.error)
        huge = episode.call("add_book", {"title": "x" * (1 << 20), "author": "A"})
        assert huge.error_type == "InvalidArguments"
        assert "argument 'title' is too long: 1,048,576 characters, the limit is 32,768" in huge.error
        nested = episode.call("add_book", {"title": "T", "author": "A" * 30_000, "pages": 1})
        assert nested.ok  # under every limit
        assert episode.state()["book"][:2] == before["book"]


def test_a_null_optional_argument_means_the_default(env):
    with env.create_episode("finish_dune") as episode:
        out = episode.call("add_book", {"title": "T", "author": "A", "pages": None})
        assert out.ok
        assert episode.state()["book"][-1]["pages"] is None


def test_calls_per_episode_are_bounded_and_reset_renews_them(fixture_domain):
    with Environment(fixture_domain, max_calls=3) as small:
        episode = small.create_episode("finish_dune")
        for _ in range(3):
            assert episode.call("get_book", {"book_id": "BK-0001"}).ok
        out = episode.call("get_book", {"book_id": "BK-0001"})
        assert out.error_type == "CallLimit" and "all 3" in out.error
        episode.reset()
        assert episode.call("get_book", {"book_id": "BK-0001"}).ok


def test_reset_restores_the_initial_state(env):
    # How long a reset takes is measured by `python -m bench.runtime` (reset, in process), not here.
    with env.create_episode("finish_dune") as episode:
        episode.call("mark_read", {"book_id": "BK-0001"})
        episode.call("remove_book", {"book_id": "BK-0002"})
        episode.call("add_book", {"title": "New", "author": "A"})
        episode.reset()
        assert episode.state() == {"book": [DUNE, EMMA]}
        assert episode.calls == 0
        assert episode.call("add_book", {"title": "New", "author": "A"}).result == {"book_id": "BK-0003"}
        episode.reset()
        assert episode.state() == {"book": [DUNE, EMMA]}


def test_reward_is_one_for_the_reference_solution_and_lower_for_doing_nothing(env):
    idle, solved = env.create_episode("finish_dune"), env.create_episode("finish_dune")
    try:
        assert solved.call("mark_read", {"book_id": "BK-0001"}).ok
        assert solved.call("add_book", {"title": "Persuasion", "author": "Jane Austen", "pages": 320}).ok
        won = solved.reward()
        assert won["reward"] == 1.0 and won["passed"] is True
        lost = idle.reward()
        assert lost["reward"] < 1.0 and lost["passed"] is False
        assert env.expected_state("finish_dune")["book"][0]["status"] == "read"
    finally:
        idle.close()
        solved.close()


def test_reward_unavailable_is_explained(env):
    with env.create_episode() as sample:
        with pytest.raises(RewardUnavailable, match="sample state"):
            sample.reward()
    with env.create_episode("broken_reference") as broken:
        with pytest.raises(RewardUnavailable, match=r"reference solution fails at step 1 \(mark_read\): NotFound"):
            broken.reward()


def test_unknown_tasks_closed_episodes_and_bad_ids_are_refused(env):
    with pytest.raises(UnknownTask, match="no task 'missing'"):
        env.create_episode("missing")
    with pytest.raises(UnknownTask):
        env.create_episode("../spec")
    with pytest.raises(EpisodeError, match="not a valid episode id"):
        env.create_episode(episode_id="a/b")
    episode = env.create_episode(episode_id="fixed-id")
    with pytest.raises(EpisodeError, match="already exists"):
        env.create_episode(episode_id="fixed-id")
    episode.close()
    with pytest.raises(EpisodeError, match="closed"):
        episode.call("get_book", {"book_id": "BK-0001"})
    with pytest.raises(EpisodeError, match="does not exist"):
        env.get_episode("fixed-id")


def test_an_episode_can_start_from_any_state_and_bad_states_are_refused(env):
    with env.create_episode(state={"book": [EMMA]}) as episode:
        assert episode.state() == {"book": [EMMA]}
        assert episode.call("add_book", {"title": "T", "author": "A"}).result == {"book_id": "BK-0003"}
        with pytest.raises(RewardUnavailable, match="not started from a task"):
            episode.reward()
    with pytest.raises(EpisodeError, match="the given state does not fit the reading_list database"):
        env.create_episode(state={"book": [{**EMMA, "status": "lost"}]})
    with pytest.raises(EpisodeError, match="unknown tables"):
        env.create_episode(state={"shelves": []})


def test_idle_episodes_are_closed_when_new_ones_are_made(fixture_domain):
    with Environment(fixture_domain, idle_timeout=0.3) as short:
        old = short.create_episode()
        busy = short.create_episode()
        time.sleep(0.4)
        busy.call("get_book", {"book_id": "BK-0001"})
        short.create_episode()
        assert old.closed and not busy.closed
        assert len(short.episodes()) == 2


@pytest.mark.parametrize("reserved", sorted(RESERVED))
def test_a_domain_with_a_tool_named_like_an_environment_operation_is_refused(fixture_domain, tmp_path, reserved):
    domain = shutil.copytree(fixture_domain, tmp_path / "reading_list")
    spec = json.loads((domain / "spec.json").read_text())
    spec["tools"][0]["name"] = reserved
    (domain / "spec.json").write_text(json.dumps(spec))
    with pytest.raises(ValueError, match=f"'{reserved}' is reserved for the environment"):
        Environment(domain)


def test_a_sample_state_file_takes_precedence(fixture_domain, tmp_path):
    domain = shutil.copytree(fixture_domain, tmp_path / "reading_list")
    (domain / "sample_state.json").write_text(json.dumps({"book": [EMMA]}))
    with Environment(domain) as other:
        with other.create_episode() as episode:
            assert episode.state() == {"book": [EMMA]}


async def test_acall_runs_off_the_event_loop(env):
    with env.create_episode("finish_dune") as episode:
        ticks = 0
        stop = threading.Event()

        async def ticker():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        out = await episode.acall("add_then_hang", {"title": "x"})
        stop.set()
        await task
        assert out.error_type == "Timeout"
        assert ticks >= 10  # the loop kept running while the tool hung for 0.5 s


def test_foreign_keys_hold_in_every_episode_and_after_a_reset(tmp_path):
    from domains.db_layer import compile_db
    from domains.spec import DomainSpec

    spec = DomainSpec.model_validate({
        "name": "jobs", "description": "Jobs and applications.", "tool_tables": {"apply": ["job", "application"]},
        "tools": [{"name": "apply", "description": "Apply to a job.", "mutates": True,
                   "parameters": [{"name": "job_id", "type": "string", "description": "Job id"}],
                   "output": [{"name": "application_id", "type": "string"}]}],
        "db": {"tables": [
            {"name": "job", "id_prefix": "JB", "columns": [
                {"name": "job_id", "type": "string", "primary_key": True, "nullable": False}]},
            {"name": "application", "id_prefix": "AP", "columns": [
                {"name": "application_id", "type": "string", "primary_key": True, "nullable": False},
                {"name": "job_id", "type": "string", "nullable": False, "foreign_key": "job.job_id"}]},
        ]},
    })
    (tmp_path / "spec.json").write_text(spec.model_dump_json())
    (tmp_path / "db.py").write_text(compile_db("jobs", spec.db))
    (tmp_path / "tools.py").write_text(
        '"""jobs tools."""\n\nfrom db import Application, next_id\n\n\n# tool: apply\n'
        "def apply(session, job_id: str) -> dict:\n"
        "    row = Application(application_id=next_id(session, Application), job_id=job_id)\n"
        "    session.add(row)\n    session.flush()\n    return {'application_id': row.application_id}\n")
    (tmp_path / "report.json").write_text(json.dumps({"tools": {"verified": ["apply"]}}))
    (tmp_path / "tests").mkdir()
    with Environment(tmp_path) as jobs:
        episodes = [jobs.create_episode(state={"job": [{"job_id": "JB-0001"}]}) for _ in range(3)]
        for episode in episodes:
            for _ in range(2):
                assert episode.call("apply", {"job_id": "JB-0001"}).ok
                refused = episode.call("apply", {"job_id": "JB-0404"})
                assert not refused.ok and "FOREIGN KEY" in refused.error
                episode.reset()
            assert episode.state() == {"job": [{"job_id": "JB-0001"}], "application": []}


def test_past_max_processes_idle_episodes_give_up_their_process_and_keep_their_state(fixture_domain):
    """Three live episodes, at most two processes: the least recently used idle one is parked (no
    process), and its next call runs on a new process over its files, with every commit it made."""
    with Environment(fixture_domain, max_processes=2) as capped:
        episodes = [capped.create_episode("finish_dune") for _ in range(3)]
        for n, episode in enumerate(episodes):
            assert episode.call("add_book", {"title": f"Book {n}", "author": "A"}).ok
        running = [e for e in episodes if capped.pool.pid(e.id) is not None]
        assert len(running) == 2 and capped.pool.pid(episodes[0].id) is None
        assert episodes[0].call("mark_read", {"book_id": "BK-0001"}).ok  # on a new process, over its files
        assert capped.pool.pid(episodes[0].id) is not None
        assert sum(capped.pool.pid(e.id) is not None for e in episodes) == 2
        for n, episode in enumerate(episodes):
            assert titles(episode) == ["Dune", "Emma", f"Book {n}"]
        assert episodes[0].state()["book"][0]["status"] == "read"
        assert capped.health()["ok"] and capped.pool.restarts == 0  # parked, not crashed
