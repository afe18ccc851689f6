"""Generated code runs only in the sandbox: refused imports, time and memory limits, crash recovery."""

from __future__ import annotations

import pytest

from domains.db_layer import compile_db
from domains.spec import Column, DBSchema, Table
from sandbox.guard import UnsafeCode, check_source
from verification.sandbox import Sandbox

SCHEMA = DBSchema(tables=[Table(name="item", id_prefix="IT", columns=[
    Column(name="item_id", type="string", primary_key=True, nullable=False),
    Column(name="label", type="string", nullable=False),
])])
STATE = {"item": [{"item_id": "IT-0001", "label": "a"}]}

WRITE_THEN_RAISE = '''from db import Item, InvalidInput, next_id


def write_then_raise(session, label: str) -> dict:
    session.add(Item(item_id=next_id(session, Item), label=label))
    session.flush()
    raise InvalidInput("refused after writing")
'''


@pytest.fixture(scope="module")
def box():
    with Sandbox(compile_db("demo", SCHEMA), timeout=0.5) as sandbox:
        yield sandbox


def run_one(box: Sandbox, name: str, source: str, test: dict) -> dict:
    refused = box.define(name, source)
    assert refused is None, refused
    return box.run_tests(name, [{"name": "t", "kind": "success", "initial_state": STATE, **test}])[0]


@pytest.mark.parametrize("module", ["os", "socket", "subprocess", "sys", "importlib", "ctypes", "pathlib"])
def test_imports_outside_the_allow_list_are_refused_before_running(box, module):
    source = f"import {module}\n\ndef probe(session) -> dict:\n    return {{}}\n"
    assert f"import of {module!r} is not allowed" in box.define("probe", source)
    source = f"from {module} import *\n\ndef probe(session) -> dict:\n    return {{}}\n"
    assert "is not allowed" in box.define("probe", source)


@pytest.mark.parametrize("snippet", [
    "open('/etc/passwd').read()",
    "eval('1+1')",
    "__import__('os')",
    "getattr(session, 'bind')",
    "session.__class__.__mro__",
    "().__class__.__base__.__subclasses__()",
])
def test_escape_hatches_are_refused(snippet):
    with pytest.raises(UnsafeCode):
        check_source(f"def probe(session):\n    return {snippet}\n")


@pytest.mark.parametrize("source, module", [
    ("import json\n\ndef probe(session):\n    return json.codecs.sys.modules['os']\n", "codecs"),
    ("import json as j\n\ndef probe(session):\n    return j.codecs\n", "codecs"),
    ("from json import codecs\n\ndef probe(session):\n    return codecs.sys\n", "codecs"),
    ("from sqlalchemy import util\n\ndef probe(session):\n    return util.compat.sys\n", "sys"),
])
def test_an_allowed_module_is_no_way_to_a_refused_one(source, module):
    with pytest.raises(UnsafeCode, match=f"module {module!r} is not allowed"):
        check_source(source)
    check_source("import json\nimport datetime\n\ndef probe(session):\n"
                 "    return json.dumps({'at': datetime.datetime(2025, 3, 1).isoformat()})\n")


GET_ITEM = ("from db import Item, get_or_raise, to_dict\n\ndef get_item(session, item_id: str) -> dict:\n"
            "    return to_dict(get_or_raise(session, Item, item_id))\n")
GET_ITEM_TEST = {"arguments": {"item_id": "IT-0001"}, "expect_return": STATE["item"][0]}


def test_a_verified_tool_runs_and_its_tests_compare_state(box):
    result = run_one(box, "get_item", GET_ITEM, GET_ITEM_TEST)
    assert result["passed"], result["problems"]


def test_a_tool_that_raises_after_writing_leaves_the_state_unchanged(box):
    assert box.define("write_then_raise", WRITE_THEN_RAISE) is None
    result = box.run_tests("write_then_raise", [{"name": "t", "kind": "rejection", "initial_state": STATE,
                                                 "arguments": {"label": "b"}, "expect_error": "InvalidInput"}])[0]
    assert result["passed"], result["problems"]
    assert result["changes"] == {}


def test_an_infinite_loop_is_stopped_by_the_time_limit(box):
    result = run_one(box, "spin", "def spin(session) -> dict:\n    while True:\n        pass\n", {})
    assert result["error"]["type"] == "Timeout"


def test_a_runaway_query_is_interrupted(box):
    source = ("from sqlalchemy import text\n\ndef query(session) -> dict:\n    session.execute(text("
              "'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c')).all()\n"
              "    return {}\n")
    result = run_one(box, "query", source, {})
    assert result["error"]["type"] == "Timeout"


def test_memory_is_limited(box):
    result = run_one(box, "hog", "def hog(session) -> dict:\n    return {'n': len(bytearray(4 * 1024 ** 3))}\n", {})
    assert result["error"]["type"] == "MemoryError"


def test_a_worker_that_never_answers_is_killed_and_the_next_tool_still_runs(box):
    stubborn = ("def stubborn(session) -> dict:\n    while True:\n        try:\n            while True:\n"
                "                pass\n        except BaseException:\n            continue\n")
    assert run_one(box, "get_item", GET_ITEM, GET_ITEM_TEST)["passed"]
    result = run_one(box, "stubborn", stubborn, {})
    assert not result["passed"] and "killed" in result["problems"][0]
    again = box.run_tests("get_item", [{"name": "t", "kind": "success", "initial_state": STATE, **GET_ITEM_TEST}])
    assert again[0]["passed"], again[0]["problems"]


def test_the_network_is_unreachable_even_through_allowed_modules(box):
    # sqlalchemy is allowed; its engine factory must not open sockets for a network URL
    source = ("from sqlalchemy import create_engine\n\ndef net(session) -> dict:\n"
              "    create_engine('postgresql://example.com/db').connect()\n    return {}\n")
    result = run_one(box, "net", source, {})
    assert result["error"] is not None


def test_a_request_far_larger_than_one_read_arrives_whole(box):
    big = {"item": [{"item_id": f"IT-{n:04d}", "label": "x" * 200} for n in range(1, 3001)]}
    assert box.define("get_item", GET_ITEM) is None
    tests = [{"name": f"t{n}", "kind": "success", "initial_state": big, "arguments": {"item_id": "IT-2999"},
              "expect_return": big["item"][2998]} for n in range(8)]
    results = box.run_tests("get_item", tests)
    assert [r["passed"] for r in results] == [True] * 8, results[0]["problems"]


def test_a_column_named_for_an_sql_keyword_loads_and_keeps_its_constraints():
    from domains.db_layer import integrity_cases
    from verification.procedural import run_integrity
    schema = DBSchema(tables=[Table(name="guest", id_prefix="GST", columns=[
        Column(name="guest_id", type="string", primary_key=True, nullable=False),
        Column(name="group", type="string", max_length=12),
        Column(name="order", type="integer", minimum=1, maximum=9),
    ])])
    with Sandbox(compile_db("demo", schema), timeout=2) as sandbox:
        assert run_integrity(sandbox, integrity_cases(schema)) == []


def test_a_python_keyword_is_refused_as_a_column_or_parameter_name():
    with pytest.raises(ValueError, match="Python keyword"):
        Column(name="class", type="string")
