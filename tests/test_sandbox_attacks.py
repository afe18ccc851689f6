"""Attacks the earlier copies of the confinement disagreed on, through each of the three paths that
run generated code: procedural tests (verification.sandbox), served episodes (mcp_servers) and
chain programs (tasks.execute). All three take their rules from the one policy, so each attack
must fail the same way on each path, and must succeed once the layer that stops it is left off
(Policy.without), which shows that the test would notice that layer missing.

- signals and process calls at other processes (tkill, tgkill, kill), process_madvise, kcmp: the
  seccomp filter refuses them before the kernel looks at their arguments, so each answers EPERM;
  without the filter the kernel answers for the argument (no such process, bad descriptor).
- System V IPC between two processes (a shared memory segment and a message queue one process
  creates and another looks up): refused by seccomp; without it the second process finds them.
- SQL from generated code on its own connection, extension loading switched on through ctypes:
  load_extension, and readfile/writefile registered as a file-access extension would: the SQLite
  authorizer refuses each by name; without it they run.
"""

from __future__ import annotations

import errno
import os
import textwrap

import pytest

from domains.db_layer import compile_db
from domains.spec import Column, DBSchema, Table
from mcp_servers import pool
from mcp_servers.runtime import CallResult, Environment
from sandbox.policy import CHAIN_PROGRAMS, TOOL_TESTS
from tasks import execute
from tests.support.fixture_domain import domain_with_tools
from verification.sandbox import Sandbox

SCHEMA = DBSchema(tables=[Table(name="item", id_prefix="IT", columns=[
    Column(name="item_id", type="string", primary_key=True, nullable=False),
    Column(name="label", type="string", nullable=False),
])])

# Through names the static guard cannot follow, as a model's code could.
REACH_IN_TOOL = "import dataclasses\n_d = dataclasses\nos = _d.sys.modules['os']\nctypes = _d.sys.modules['ctypes']\n"
REACH_IN_PROGRAM = "import json\nj = json\nos = j.codecs.sys.modules['os']\nctypes = j.codecs.sys.modules['ctypes']\n"

SYSCALLS = """libc = ctypes.CDLL(None, use_errno=True)
probes = {'tkill': (200, 999999, 0), 'tgkill': (234, 999999, 999999, 0), 'kill': (62, 999999, 0),
          'process_madvise': (440, -1, 0, 0, 0, 0), 'kcmp': (312, os.getpid(), 999999, 0, 0, 0)}
out = {}
for name, args in probes.items():
    ctypes.set_errno(0)
    out[name] = 0 if libc.syscall(*args) == 0 else ctypes.get_errno()
"""

IPC = """libc = ctypes.CDLL(None, use_errno=True)
if role == 'create':
    out = {'shm': libc.shmget(key, 4096, 0o1666), 'msg': libc.msgget(key, 0o1666)}
else:
    out = {'shm': libc.shmget(key, 0, 0o666), 'msg': libc.msgget(key, 0o666)}
    if out['shm'] >= 0:
        libc.shmctl(out['shm'], 0, None)
    if out['msg'] >= 0:
        libc.msgctl(out['msg'], 0, None)
"""

SQL = """raw = session.connection().connection.dbapi_connection
handle = ctypes.c_void_p.from_address(id(raw) + 16).value
ctypes.CDLL('libsqlite3.so.0').sqlite3_enable_load_extension(ctypes.c_void_p(handle), 1)
raw.create_function('readfile', 1, lambda path: 'read ' + path)
raw.create_function('writefile', 2, lambda path, data: len(data))
out = {}
for sql in ("SELECT load_extension('libc.so.6')", "SELECT readfile('db')", "SELECT writefile('x', 'y')"):
    try:
        out[sql] = str(raw.execute(sql).fetchone()[0])
    except Exception as error:
        out[sql] = str(error)
"""

TOOLS = {"syscalls": ({}, SYSCALLS), "ipc": ({"role": "string", "key": "integer"}, IPC), "sql": ({}, SQL)}


def _tool(name: str, params: dict[str, str], body: str) -> str:
    args = "".join(f", {p}: {'str' if t == 'string' else 'int'}" for p, t in params.items())
    return f"def {name}(session{args}) -> dict:\n" + textwrap.indent(REACH_IN_TOOL + body + "return out\n", "    ")


class ToolTests:
    """A tool run as its procedural tests run it."""

    def __init__(self, policy):
        self.box = Sandbox(compile_db("demo", SCHEMA), timeout=2.0, memory_mb=512, policy=policy)

    def run(self, tool: str, **arguments) -> dict:
        params, body = TOOLS[tool]
        assert self.box.define(tool, _tool(tool, params, body)) is None
        test = {"name": "t", "kind": "success", "initial_state": {}, "arguments": arguments, "expect_return": {}}
        outcome = self.box.run_tests(tool, [test])[0]
        assert outcome.get("error") is None, outcome
        return outcome["returned"]

    def close(self) -> None:
        self.box.close()


class Episodes:
    """A tool served in episodes: one episode for each run."""

    def __init__(self, domain, policy, monkeypatch):
        monkeypatch.setattr(pool, "POLICY", policy)
        self.env = Environment(domain, call_timeout=5.0, memory_mb=256)

    def run(self, tool: str, **arguments) -> dict:
        with self.env.create_episode("finish_dune") as episode:
            out = episode.call(tool, arguments)
        assert out.ok, out
        return out.result

    def close(self) -> None:
        self.env.close()


class _Echo:
    def call(self, _tool, arguments):
        return CallResult(True, result=arguments)


class ChainPrograms:
    """A program run as the task stage runs the model's chain programs."""

    def __init__(self, policy):
        self.policy = policy

    def run(self, tool: str, **arguments) -> dict:
        assigns = "".join(f"{name} = {value!r}\n" for name, value in arguments.items())
        program = REACH_IN_PROGRAM + assigns + TOOLS[tool][1] + "call('report', out=out)\n"
        run = execute.run_chain(_Echo(), program, timeout=10.0, policy=self.policy)
        assert run.error is None, run.error
        return run.results[0]["out"]

    def close(self) -> None:
        pass


PATHS = ["tool tests", "episodes", "chain programs"]


@pytest.fixture(scope="module")
def attack_domain(fixture_domain, tmp_path_factory):
    tools = {name: (params, _tool(name, params, body)) for name, (params, body) in TOOLS.items()}
    return domain_with_tools(fixture_domain, tmp_path_factory.mktemp("sandbox-attacks"), tools)


def _path(kind: str, layers_off: tuple[str, ...], domain, monkeypatch):
    if kind == "tool tests":
        return ToolTests(TOOL_TESTS.without(*layers_off))
    if kind == "episodes":
        return Episodes(domain, pool.EPISODES.without(*layers_off), monkeypatch)
    return ChainPrograms(CHAIN_PROGRAMS.without(*layers_off))


@pytest.fixture(scope="module", params=PATHS)
def confined(request, attack_domain):
    """Each path with every layer."""
    with pytest.MonkeyPatch.context() as patch:
        path = _path(request.param, (), attack_domain, patch)
        yield path
    path.close()


@pytest.fixture(scope="module", params=PATHS)
def without_seccomp(request, attack_domain):
    with pytest.MonkeyPatch.context() as patch:
        path = _path(request.param, ("seccomp",), attack_domain, patch)
        yield path
    path.close()


@pytest.fixture(scope="module", params=PATHS[:2])
def without_authorizer(request, attack_domain):
    """The two paths that hold a database, with the SQLite authorizer left off."""
    with pytest.MonkeyPatch.context() as patch:
        path = _path(request.param, ("authorizer",), attack_domain, patch)
        yield path
    path.close()


def _ipc_between_two_processes(path) -> dict:
    key = 0x57530000 + os.getpid() % 0xFFFF
    path.run("ipc", role="create", key=key)
    return path.run("ipc", role="find", key=key)


def test_signals_kcmp_and_process_madvise_never_reach_the_kernel(confined):
    assert confined.run("syscalls") == dict.fromkeys(("tkill", "tgkill", "kill", "process_madvise", "kcmp"),
                                                     errno.EPERM)


def test_without_seccomp_the_same_calls_reach_the_kernel(without_seccomp):
    answered = without_seccomp.run("syscalls")
    assert answered == {"tkill": errno.ESRCH, "tgkill": errno.ESRCH, "kill": errno.ESRCH,
                        "process_madvise": errno.EBADF, "kcmp": errno.ESRCH}


def test_no_system_v_ipc_between_two_processes(confined):
    assert _ipc_between_two_processes(confined) == {"shm": -1, "msg": -1}


def test_without_seccomp_two_processes_share_system_v_ipc(without_seccomp):
    found = _ipc_between_two_processes(without_seccomp)
    assert found["shm"] >= 0 and found["msg"] >= 0, found


def test_sql_cannot_load_extensions_or_call_file_functions(confined):
    if isinstance(confined, ChainPrograms):
        pytest.skip("a chain program holds no database (CHAIN_PROGRAMS.database is 'none'): its only capability is call()")
    answers = confined.run("sql")
    assert len(answers) == 3 and all(a.startswith("not authorized to use function") for a in answers.values()), answers


def test_without_the_authorizer_sql_loads_extensions_and_calls_file_functions(without_authorizer):
    answers = without_authorizer.run("sql")
    assert "undefined symbol" in answers["SELECT load_extension('libc.so.6')"]  # libc was loaded into the process
    assert answers["SELECT readfile('db')"] == "read db" and answers["SELECT writefile('x', 'y')"] == "1"
