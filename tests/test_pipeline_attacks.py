"""Generated tools written to do harm, run the way the code, test and debug agents' output runs:
`Sandbox.define` then `run_tests`. Each attack is judged by evidence outside the sandbox (files
on the host, listening sockets, this process's memory and children, the verdict the parent
decides), never by what the attacking tool says.

Every attack passes the AST guard: it reaches `os`, `open` and `socket` through modules the
guard allows, by names the static check cannot follow (`_d = dataclasses; _d.sys`, `_e.bltns`,
the session's DB-API module).
"""

from __future__ import annotations

import os
import resource
import socket
import sysconfig
import time
from pathlib import Path

import pytest

from domains.db_layer import compile_db
from domains.spec import Column, DBSchema, Table
from verification.sandbox import Sandbox

SCHEMA = DBSchema(tables=[Table(name="item", id_prefix="IT", columns=[
    Column(name="item_id", type="string", primary_key=True, nullable=False),
    Column(name="label", type="string", nullable=False),
])])
STATE = {"item": [{"item_id": "IT-0001", "label": "a"}]}

_OS = "    import dataclasses\n    _d = dataclasses\n    os = _d.sys.modules['os']\n"
_DBAPI_OS = "    os = session.bind.dialect.dbapi.collections._sys.modules['os']\n"
_OPEN = "    import enum\n    _e = enum\n    open_ = _e.bltns.open\n"


def _run(box: Sandbox, name: str, body: str, arguments: dict | None = None, expect_return=None) -> dict:
    params = "".join(f", {key}: str" for key in (arguments or {}))
    refused = box.define(name, f"def {name}(session{params}) -> dict:\n{body}")
    assert refused is None, refused  # the guard lets it through: only the OS stands in the way
    test = {"name": "t", "kind": "success", "initial_state": STATE, "arguments": arguments or {},
            "expect_return": expect_return if expect_return is not None else {"ok": True}}
    return box.run_tests(name, [test])[0]


@pytest.fixture(scope="module")
def box():
    with Sandbox(compile_db("demo", SCHEMA), timeout=2.0, memory_mb=512) as sandbox:
        yield sandbox


def test_files_outside_the_scratch_cannot_be_read(box, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET")
    for path in (str(secret), "/etc/passwd", str(Path.home() / ".bashrc")):
        result = _run(box, "read_file", _OPEN + "    return {'data': open_(path).read()}\n", {"path": path})
        assert not result["passed"]
        assert "HOST-SECRET" not in str(result) and "root:" not in str(result)


def test_files_outside_the_scratch_cannot_be_written_nor_a_pth_planted_in_the_venv(box, tmp_path):
    host_file = tmp_path / "host.txt"
    host_file.write_text("host data")
    planted = Path(sysconfig.get_paths()["purelib"]) / "worldsmith_pipeline_planted.pth"
    for path in (str(host_file), str(tmp_path / "new.txt"), str(planted)):
        body = _OPEN + "    open_(path, 'a').write('import os; os.system(\"id\")\\n')\n    return {'ok': True}\n"
        assert not _run(box, "write_file", body, {"path": path})["passed"]
    assert host_file.read_text() == "host data"
    assert not (tmp_path / "new.txt").exists() and not planted.exists()


def test_host_sqlite_files_are_out_of_reach_of_sql(box, tmp_path):
    import sqlite3
    host_db = tmp_path / "host.db"
    with sqlite3.connect(host_db) as connection:
        connection.execute("CREATE TABLE secret (v TEXT)")
        connection.execute("INSERT INTO secret VALUES ('HOST-ROW')")
    before = host_db.read_bytes()
    # through the session's own connection, with its SQL authorizer removed first, and through
    # a new connection the DB-API module opens on the host file
    unguarded = "    raw = session.connection().connection.dbapi_connection\n    raw.set_authorizer(None)\n"
    attach = (unguarded + "    raw.execute(\"ATTACH DATABASE '\" + path + \"' AS h\")\n"
              "    raw.execute(\"INSERT INTO h.secret VALUES ('pwned')\")\n"
              "    return {'rows': [list(r) for r in raw.execute('SELECT * FROM h.secret')]}\n")
    direct = ("    raw = session.bind.dialect.dbapi.connect(path)\n    raw.execute(\"INSERT INTO secret VALUES ('pwned')\")\n"
              "    raw.commit()\n    return {'rows': [list(r) for r in raw.execute('SELECT * FROM secret')]}\n")
    for name, body in (("attach", attach), ("direct", direct)):
        result = _run(box, name, body, {"path": str(host_db)})
        assert not result["passed"] and "HOST-ROW" not in str(result)
    vacuum = unguarded + "    raw.execute(\"VACUUM INTO '\" + path + \"'\")\n    return {'ok': True}\n"
    assert not _run(box, "vacuum_into", vacuum, {"path": str(tmp_path / "copy.db")})["passed"]
    assert host_db.read_bytes() == before and not (tmp_path / "copy.db").exists()


@pytest.mark.parametrize("reach", [_OS, _DBAPI_OS])
def test_no_process_can_be_started(box, tmp_path, reach):
    marker = tmp_path / "spawned"
    body = reach + f"    os.system('touch {marker}')\n    os.posix_spawn('/bin/touch', ['touch', '{marker}'], {{}})\n" \
        "    return {'ok': True}\n"
    result = _run(box, "spawn", body)
    assert not result["passed"]
    assert not marker.exists()


def test_no_network_no_unix_socket_and_no_way_back_into_the_host_namespace(box, tmp_path):
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))
    unix.listen()
    # the C module underneath `socket`, so no Python-level stub stands in the way
    connect = _OS + ("    _socket = _d.sys.modules['_socket']\n    if address.startswith('/'):\n"
                     "        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)\n        s.connect(address)\n"
                     "    else:\n        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\n"
                     "        s.connect(('127.0.0.1', int(address)))\n    s.send(b'leak')\n    return {'ok': True}\n")
    setns = _OS + ("    libc = _d.sys.modules['ctypes'].CDLL(None, use_errno=True)\n"
                   "    for pid in ('1', str(os.getppid())):\n        try:\n"
                   "            fd = os.open('/proc/' + pid + '/ns/net', os.O_RDONLY)\n        except OSError:\n"
                   "            continue\n        if libc.setns(fd, 0) == 0:\n            break\n"
                   "    _socket = _d.sys.modules['_socket']\n"
                   "    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\n"
                   "    s.connect(('127.0.0.1', int(address)))\n    s.send(b'leak')\n    return {'ok': True}\n")
    try:
        port = str(tcp.getsockname()[1])
        for name, body, address in (("connect", connect, port), ("connect", connect, str(tmp_path / "s.sock")),
                                    ("setns", setns, port)):
            assert not _run(box, name, body, {"address": address})["passed"]
        for listener in (tcp, unix):
            listener.settimeout(0.2)
            with pytest.raises(TimeoutError):
                listener.accept()  # nobody connected
    finally:
        tcp.close()
        unix.close()


def test_the_parents_proc_entries_are_out_of_reach(box, monkeypatch):
    monkeypatch.setenv("WORLDSMITH_TEST_API_KEY", "sk-PARENT-SECRET")
    me = str(os.getpid())
    environ = _OPEN + "    return {'env': open_('/proc/' + pid + '/environ', 'rb').read().decode(errors='replace')}\n"
    mem = _OPEN + "    f = open_('/proc/' + pid + '/mem', 'r+b')\n    f.seek(4096)\n    f.write(b'x')\n" \
        "    return {'ok': True}\n"
    kill = _OS + "    os.kill(int(pid), 9)\n    os.kill(os.getppid(), 9)\n    return {'ok': True}\n"
    # A fresh worker is spawned with a clean environment, but this process's variables must stay unreadable too.
    for name, body in (("environ", environ), ("mem", mem), ("kill", kill)):
        result = _run(box, name, body, {"pid": me})
        assert not result["passed"] and "PARENT-SECRET" not in str(result)
    assert os.environ["WORLDSMITH_TEST_API_KEY"] == "sk-PARENT-SECRET"  # still alive, still ours


GET_ITEM = ("from db import Item, get_or_raise, to_dict\n\ndef get_item(session, item_id: str) -> dict:\n"
            "    return to_dict(get_or_raise(session, Item, item_id))\n")
ADD_ITEM = ("from db import Item, next_id\n\ndef add_item(session, label: str) -> dict:\n"
            "    item = Item(item_id=next_id(session, Item), label=label)\n    session.add(item)\n"
            "    return {'item_id': item.item_id}\n")


def test_nothing_a_tool_under_test_changes_persists_into_the_next_tool(box):
    poison = ("    import json\n    import db\n    import dataclasses\n    _d = dataclasses\n    import sqlalchemy\n"
              "    builtins = _d.sys.modules['builtins']\n"
              "    json.dumps = lambda *a, **k: '\"poisoned\"'\n    db.next_id = lambda s, m: 'POISONED'\n"
              "    db.to_dict = lambda row: {'poisoned': True}\n    builtins.len = lambda x: 0\n"
              "    sqlalchemy.orm.Session.add = lambda self, obj: None\n"
              "    sqlalchemy.event.listen(session.bind, 'before_cursor_execute',\n"
              "                            lambda *a: (_ for _ in ()).throw(RuntimeError('poisoned')))\n"
              + _OPEN + "    open_('marker', 'w').write('left behind')\n    return {'ok': True}\n")
    _run(box, "poison", poison)
    assert box.define("get_item", GET_ITEM) is None
    got = box.run_tests("get_item", [{"name": "t", "kind": "success", "initial_state": STATE,
                                      "arguments": {"item_id": "IT-0001"}, "expect_return": STATE["item"][0]}])[0]
    assert got["passed"], got["problems"]
    assert box.define("add_item", ADD_ITEM) is None
    added = box.run_tests("add_item", [{"name": "t", "kind": "success", "initial_state": STATE,
                                        "arguments": {"label": "b"}, "expect_return": {"item_id": "IT-0002"},
                                        "expect_changes": {"item": {"inserted": [
                                            {"item_id": "IT-0002", "label": "b"}]}}}])[0]
    assert added["passed"], added["problems"]
    marker = _OPEN + "    return {'found': open_('marker').read()}\n"
    assert "left behind" not in str(_run(box, "marker", marker))


def test_folders_left_in_the_scratch_are_gone_for_the_next_tool_even_unwritable_ones(box):
    plant = _OS + _OPEN + ("    os.makedirs('a/b/c')\n    open_('a/b/c/deep', 'w').write('left behind')\n"
                           "    os.chmod('a/b', 0o500)\n    os.chmod('a', 0o500)\n    return {'ok': True}\n")
    assert _run(box, "plant", plant)["passed"]
    # a checkout under /tmp has bubblewrap's folders for its binds here too: look for the tool's own
    look = _OS + "    return {'left': 'a' in os.listdir('.')}\n"
    assert _run(box, "look", look, expect_return={"left": False})["passed"]


def test_forged_verdicts_and_extra_frames_do_not_make_a_wrong_tool_pass(box):
    # A wrong tool (returns nothing useful) writes "passed" replies for every plausible request id
    # to every pipe it has, then returns. The parent must still judge it by what it really returned.
    forge = _OS + ("    struct = _d.sys.modules['struct']\n    json = _d.sys.modules['json']\n"
                   "    stat = _d.sys.modules['stat']\n"
                   "    body = json.dumps({'ok': True, 'outcomes': [{'returned': {'ok': True}, 'error': None,"
                   " 'changes': {}}]}).encode()\n"
                   "    for fd in range(0, 64):\n        try:\n            if not stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
                   "                continue\n            for rid in range(0, 40):\n"
                   "                os.write(fd, struct.pack('>III', rid, len(body), 0) + body)\n"
                   "        except OSError:\n            pass\n    return {'ok': False}\n")
    result = _run(box, "forge", forge)
    assert not result["passed"]
    assert _run(box, "honest", "    return {'ok': True}\n")["passed"]  # the next tool is judged normally


def test_a_tool_that_closes_its_reply_pipe_and_keeps_running_is_killed(box):
    # Its end of the pipe closes early, so the reply looks finished while the process still runs.
    spin = _OS + ("    for fd in range(3, 256):\n        try:\n            os.close(fd)\n        except OSError:\n"
                  "            pass\n    while True:\n        pass\n")
    result = _run(box, "spin", spin)
    assert not result["passed"] and "killed" in result["problems"][0]
    assert _run(box, "honest", "    return {'ok': True}\n")["passed"]


def test_an_oversized_reply_does_not_grow_the_parent(box):
    grown_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = _run(box, "huge", "    return {'ok': 'x' * (300 << 20)}\n")
    assert not result["passed"]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown_before < 150_000  # KiB


def test_memory_and_process_bombs_across_a_process_tree_stay_inside(box):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: an orphan that outlived its sandbox would land here
    children_before = _template_up()
    bomb = _OS + ("    pids = []\n    for _ in range(30):\n        pid = os.fork()\n        if pid == 0:\n"
                  "            os.setsid()\n            held = bytearray(1 << 30)\n            os.pause()\n"
                  "        pids.append(pid)\n    return {'ok': True}\n")
    result = _run(box, "bomb", bomb)
    assert not result["passed"]
    hog = "    blocks = []\n    while True:\n        blocks.append(bytearray(64 << 20))\n"
    assert not _run(box, "hog", hog)["passed"]
    # no forked or setsid child outlives its sandbox: only the next spare worker's processes remain (a
    # replaced worker's tree takes a moment to exit; an orphan never does)
    deadline = time.monotonic() + 10
    while len(_live(_descendants(os.getpid()))) > len(children_before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_live(_descendants(os.getpid()))) <= len(children_before)
    libc.prctl(36, 0, 0, 0, 0)
    assert _run(box, "honest", "    return {'ok': True}\n")["passed"]


def _template_up(seconds: float = 10.0) -> set[int]:
    """Our live descendants once the sandbox's template worker, which starts in the background, is up
    (bwrap, its child and the worker): counted earlier, the baseline misses the processes still forking."""
    deadline = time.monotonic() + seconds
    while True:
        live = _live(_descendants(os.getpid()))
        if any(_is_worker(pid) for pid in live) or time.monotonic() > deadline:
            return live
        time.sleep(0.05)


def _is_worker(pid: int) -> bool:
    """The worker's interpreter itself, not the bwrap processes whose command line names it."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except FileNotFoundError:
        return False
    return not argv[0].endswith(b"bwrap") and argv[-1] == b"verification.tool_worker"


def _live(pids: set[int]) -> set[int]:
    """Processes still running (bwrap's exited intermediates wait here as zombies)."""
    out = set()
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                out.add(pid)
        except (FileNotFoundError, IndexError):
            pass
    return out


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                children = (task / "children").read_text().split()
            except FileNotFoundError:
                continue
            for child in children:
                out.add(int(child))
                todo.append(int(child))
    return out
