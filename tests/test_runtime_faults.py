"""Faults the runtime must survive without losing committed state: episode processes killed while
idle or busy, timeouts landing inside database calls, tools that try to commit on their own,
results past the size limit."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from mcp_servers.runtime import Environment
from tests.support.fixture_domain import DUNE, EMMA, domain_with_tools

_ADD = '    session.add(Book(book_id=next_id(session, Book), title=title, author="X", added_at=now(session)))\n'
TOOLS = {
    "commit_then_fail": ({"title": "string"},
                         "def commit_then_fail(session, title: str) -> dict:\n" + _ADD
                         + '    session.commit()\n    raise InvalidInput("refused after committing")\n'),
    "raw_commit_then_fail": ({"title": "string"},
                             "def raw_commit_then_fail(session, title: str) -> dict:\n" + _ADD
                             + '    session.flush()\n    session.connection().exec_driver_sql("COMMIT")\n'
                             + '    raise InvalidInput("refused after committing")\n'),
    "endless_query": ({"title": "string"},
                      "def endless_query(session, title: str) -> dict:\n" + _ADD
                      + "    from sqlalchemy import text\n"
                      + '    q = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"\n'
                      + "    return {'n': session.execute(text(q)).scalar()}\n"),
    "endless_writes": ({"title": "string"},
                       "def endless_writes(session, title: str) -> dict:\n    while True:\n"
                       + "    " + _ADD + "        session.flush()\n"),
    "rollback_then_add": ({"title": "string"},
                          "def rollback_then_add(session, title: str) -> dict:\n" + _ADD.replace("title=title", "title='undone'")
                          + "    session.flush()\n    session.rollback()\n" + _ADD + "    return {'ok': True}\n"),
    "catch_refused_commit": ({"title": "string"},
                             "def catch_refused_commit(session, title: str) -> dict:\n" + _ADD + "    session.flush()\n"
                             + "    try:\n        session.connection().commit()\n    except Exception:\n        pass\n"
                             + _ADD + "    session.flush()\n    return {'ok': True}\n"),  # writes on after it
    "connection_commit": ({"title": "string"},
                          "def connection_commit(session, title: str) -> dict:\n" + _ADD + "    session.flush()\n"
                          + "    session.connection().commit()\n    return {'ok': True}\n"),
    "close_connection": ({"title": "string"},
                         "def close_connection(session, title: str) -> dict:\n" + _ADD + "    session.flush()\n"
                         + "    session.connection().close()\n    return {'ok': True}\n"),
    "big_result": ({"megabytes": "integer"},
                   "def big_result(session, megabytes: int) -> dict:\n" + _ADD.replace("title=title", "title='big'")
                   + "    return {'data': 'x' * (megabytes << 20)}\n"),
}


@pytest.fixture(scope="module")
def env(fixture_domain, tmp_path_factory):
    domain = domain_with_tools(fixture_domain, tmp_path_factory.mktemp("faults"), TOOLS)
    with Environment(domain, call_timeout=0.3) as environment:
        yield environment


def titles(episode) -> list[str]:
    return [b["title"] for b in episode.state()["book"]]


def wait_until_served(env, episode_id: str, old_pid: int) -> int:
    """The replacement's pid, once the monitor has replaced the dead process."""
    for _ in range(500):
        pid = env.pool.pid(episode_id)
        if pid not in (None, old_pid) and env.health()["ok"]:
            return pid
        time.sleep(0.01)
    raise AssertionError("the episode's process was not replaced")


def test_sigkill_of_an_idle_episode_process_loses_no_committed_state(env):
    with env.create_episode("finish_dune") as episode, env.create_episode("finish_dune") as bystander:
        assert episode.call("add_book", {"title": "Kept", "author": "A"}).ok
        assert bystander.call("mark_read", {"book_id": "BK-0002"}).ok
        committed, other = episode.state(), bystander.state()
        pid, other_pid, restarts = env.pool.pid(episode.id), env.pool.pid(bystander.id), env.pool.restarts
        env.pool.signal(episode.id)  # as the OOM killer would
        new_pid = wait_until_served(env, episode.id, pid)
        assert new_pid != pid and env.pool.restarts == restarts + 1
        assert episode.state() == committed
        assert episode.call("add_book", {"title": "After", "author": "A"}).ok
        assert titles(episode) == ["Dune", "Emma", "Kept", "After"]
        assert env.pool.pid(bystander.id) == other_pid and bystander.state() == other


def test_sigkill_of_a_busy_episode_process_loses_no_committed_state(env):
    with env.create_episode("finish_dune") as episode:
        assert episode.call("mark_read", {"book_id": "BK-0001"}).ok
        committed = episode.state()
        pid = env.pool.pid(episode.id)
        outcome = {}
        worker = threading.Thread(target=lambda: outcome.update(out=episode.call("add_then_hang", {"title": "Ghost"})))
        worker.start()
        time.sleep(0.1)  # inside the tool, its book written but not committed
        env.pool.signal(episode.id)
        worker.join()
        out = outcome["out"]
        assert not out.ok and out.error_type in ("WorkerCrashed", "Timeout"), out
        assert "last successful call" in out.error
        assert env.pool.pid(episode.id) != pid
        assert episode.state() == committed
        assert episode.call("add_book", {"title": "After", "author": "A"}).ok


@pytest.mark.parametrize("tool", ["endless_query", "endless_writes", "add_then_stall"])
def test_timeouts_inside_database_calls_never_lose_the_database(env, tool):
    with env.create_episode("finish_dune") as episode:
        for n in range(8):
            assert episode.call("add_book", {"title": f"kept-{n}", "author": "A"}).ok
            out = episode.call(tool, {"title": "Ghost"})
            assert not out.ok and out.error_type == "Timeout", out
        assert titles(episode) == ["Dune", "Emma"] + [f"kept-{n}" for n in range(8)]
        episode.reset()
        assert episode.state() == {"book": [DUNE, EMMA]}


def test_a_tool_cannot_commit_a_write_it_then_fails(env):
    with env.create_episode("finish_dune") as episode:
        for tool in ("commit_then_fail", "raw_commit_then_fail"):
            out = episode.call(tool, {"title": "Ghost"})
            assert not out.ok, out
            assert episode.state() == {"book": [DUNE, EMMA]}, tool
        assert "not authorized" in episode.call("raw_commit_then_fail", {"title": "Ghost"}).error


def test_a_tool_rolls_back_only_its_own_call_and_a_refused_commit_keeps_nothing(env):
    with env.create_episode("finish_dune") as episode:
        assert episode.call("rollback_then_add", {"title": "Kept"}).ok  # back to the call's start, then on
        assert titles(episode) == ["Dune", "Emma", "Kept"]
        for tool in ("catch_refused_commit", "connection_commit", "close_connection"):
            out = episode.call(tool, {"title": "Ghost"})
            assert not out.ok, (tool, out)
            assert titles(episode) == ["Dune", "Emma", "Kept"], tool
        assert episode.call("add_book", {"title": "After", "author": "A"}).ok  # the connection serves on
        assert titles(episode) == ["Dune", "Emma", "Kept", "After"]


def test_a_result_over_the_limit_is_refused_and_its_writes_undone(env):
    with env.create_episode("finish_dune") as episode:
        out = episode.call("big_result", {"megabytes": 3})
        assert not out.ok and out.error_type == "ResultTooLarge"
        assert "the limit is 1,048,576" in out.error
        assert episode.state() == {"book": [DUNE, EMMA]}


def test_the_call_timeout_covers_waiting_for_the_previous_call(env):
    with env.create_episode("finish_dune") as episode:
        outs = []
        threads = [threading.Thread(target=lambda: outs.append(episode.call("add_then_hang", {"title": "G"})))
                   for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [o.error_type for o in outs] == ["Timeout"] * 3
        assert any("busy with another call" in o.error for o in outs)
        assert episode.state() == {"book": [DUNE, EMMA]}


def test_a_dead_template_is_replaced_and_every_episode_keeps_its_state(env):
    episodes = [env.create_episode("finish_dune") for _ in range(3)]
    try:
        for n, episode in enumerate(episodes):
            assert episode.call("add_book", {"title": f"kept-{n}", "author": "A"}).ok
        expected = [episode.state() for episode in episodes]
        old = env.pool._template.pid
        os.kill(old, signal.SIGKILL)  # its episode processes die with it
        for _ in range(500):
            if env.pool._template.pid != old and env.health()["ok"]:
                break
            time.sleep(0.01)
        assert env.health()["ok"] and env.pool._template.pid != old
        assert [episode.state() for episode in episodes] == expected
        with env.create_episode("finish_dune") as fresh:
            assert fresh.state() == {"book": [DUNE, EMMA]}
    finally:
        for episode in episodes:
            episode.close()
