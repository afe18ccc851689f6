"""Ordinary standard-library code a model writes gives the same result confined as unconfined:
dates formatted and parsed every common way (strftime and strptime import `time` and `_strptime`
from C, which the run-time import guard once refused), ISO dates, regular expressions, decimal
rounding, sorting with keys, JSON round trips, format specs."""

from __future__ import annotations

import json

import pytest

from domains.db_layer import compile_db
from domains.spec import Column, DBSchema, Table
from mcp_servers.runtime import CallResult
from tasks.execute import run_chain
from verification.sandbox import Sandbox

SCHEMA = DBSchema(tables=[Table(name="item", id_prefix="IT", columns=[
    Column(name="item_id", type="string", primary_key=True, nullable=False)])])

CORPUS = '''import collections
import datetime
import decimal
import functools
import itertools
import json
import math
import re
import string


def corpus(session) -> dict:
    d = datetime.datetime(2025, 3, 1, 14, 5, 9, 123456)
    utc = datetime.timezone.utc
    out = {
        "strftime": [d.strftime("%Y-%m-%d %H:%M:%S"), d.strftime("%A %d %B %Y %I:%M %p %j %U %W %a %b %%"),
                     d.strftime("%c|%x|%X"), d.date().strftime("%d/%m/%y"), d.time().strftime("%H:%M"),
                     format(d, "%Y"), f"{d:%b %d, %Y}", f"{d.date():%G-W%V-%u}", d.ctime(), d.isoformat(" ")],
        "strptime": [datetime.datetime.strptime("2025-03-01 14:05", "%Y-%m-%d %H:%M").isoformat(),
                     datetime.datetime.strptime("01 March 2025", "%d %B %Y").isoformat(),
                     datetime.datetime.strptime("Sat, 01 Mar 2025 09:30 PM", "%a, %d %b %Y %I:%M %p").isoformat(),
                     datetime.datetime.strptime("2025-W09-1", "%G-W%V-%u").date().isoformat(),
                     datetime.datetime.strptime("2025-03-01T10:00:00+0200", "%Y-%m-%dT%H:%M:%S%z").isoformat(),
                     datetime.datetime.strptime("3/1/25", "%m/%d/%y").date().isoformat()],
        "iso": [datetime.date.fromisoformat("2025-03-01").isoformat(),
                datetime.datetime.fromisoformat("2025-03-01T10:00:00+02:00").astimezone(utc).isoformat(),
                datetime.datetime.fromisoformat("2025-03-01 10:00").isoformat(),
                datetime.time.fromisoformat("10:30").isoformat(), datetime.date(2025, 3, 1).isocalendar()[1],
                d.timetuple().tm_yday, (d - datetime.timedelta(days=40, hours=3)).isoformat(),
                datetime.datetime(2025, 3, 1, tzinfo=utc).timestamp(),
                datetime.datetime.fromtimestamp(86400 * 365, utc).isoformat(),
                (datetime.date(2025, 3, 31) - datetime.date(2025, 1, 1)).days],
        "decimal": [str(decimal.Decimal("2.675").quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_UP)),
                    str(decimal.Decimal("2.665").quantize(decimal.Decimal("0.01"))),
                    str(decimal.Decimal(1) / decimal.Decimal(7)), format(decimal.Decimal("1234.5"), ",.2f"),
                    f"{decimal.Decimal('3.14159'):.3f}", str(decimal.getcontext().prec),
                    str(sum(decimal.Decimal(x) for x in ("0.1", "0.2", "0.3"))), round(2.675, 2), round(-0.5)],
        "format": [f"{1234567.891:,.2f}", f"{0.256:.1%}", f"{42:08b}", f"{'x':>5}|{'y':^5}|{'z':<3}|",
                   f"{3.0:g}", f"{1e-7:.2e}", f"{255:#x}", format(1234567, "n"), "{:>10}".format("right"),
                   "%05.1f|%-4d|%s" % (3.14159, 42, None), string.capwords("hello world")],
        "regex": [re.sub(r"(\\w+)@(\\w+)", r"\\2 at \\1", "me@host"), re.findall(r"\\d+", "a1b22c333"),
                  bool(re.fullmatch(r"[A-Z]{2}-\\d{4}", "AB-1234")), re.compile(r"\\s+", re.I).split("a  b\\tc"),
                  re.escape("a.b*c"), re.search(r"(?P<y>\\d{4})-(?P<m>\\d\\d)", "on 2025-03").groupdict(),
                  re.sub(r"[^a-z0-9]+", "-", "Hello, World!".lower()).strip("-")],
        "json": [json.loads(json.dumps({"a": [1, 2.5, None, True], "b": "é"}, sort_keys=True, indent=2)),
                 json.dumps({"x": 1.0, "y": "ü"}, separators=(",", ":"), ensure_ascii=False),
                 json.loads('[1, "two", {"3": 4}, 1e3, -0.0]')],
        "sorting": [sorted([("b", 2), ("a", 2), ("c", 1)], key=lambda t: (-t[1], t[0])),
                    sorted(["B", "a", "C"], key=str.lower), sorted([3, 1, 2], reverse=True),
                    collections.Counter("abracadabra").most_common(2),
                    [k for k, _ in itertools.groupby(sorted("aabbbc"))],
                    functools.reduce(lambda a, b: a * b, range(1, 6)), math.isclose(0.1 + 0.2, 0.3),
                    max([{"n": 1}, {"n": 3}], key=lambda r: r["n"])],
        "text": ["Straße".casefold(), "ß".upper(), "x".encode("idna").decode(), str(2 ** 100), "a,b,,c".split(",")],
    }
    return out
'''


def unconfined() -> dict:
    namespace: dict = {}
    exec(CORPUS, namespace)
    return json.loads(json.dumps(namespace["corpus"](None)))


@pytest.fixture(scope="module")
def expected() -> dict:
    return unconfined()


def test_the_corpus_runs_confined_as_a_tool_as_it_does_unconfined(expected):
    with Sandbox(compile_db("demo", SCHEMA)) as box:
        assert box.define("corpus", CORPUS) is None
        outcome = box.run_tests("corpus", [{"name": "t", "kind": "success", "initial_state": {}, "arguments": {},
                                            "expect_return": expected}])[0]
    assert outcome["passed"], outcome["problems"]


class _Echo:
    def call(self, _tool, arguments):
        return CallResult(True, result=arguments)


def test_the_corpus_runs_as_a_chain_program_as_it_does_unconfined(expected):
    run = run_chain(_Echo(), CORPUS + "call('report', **corpus(None))\n")
    assert run.error is None, run.error
    assert run.results == [expected]
