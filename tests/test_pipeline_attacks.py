"""Generated code written to do harm, run where the pipeline runs it: `Sandbox.define` and
`run_tests`, as the code, test and debug agents' output is. Every attack passes the AST guard
(it reaches `os`, `open` and `socket` through modules the guard allows), and each is judged by
evidence outside the sandbox (files on the host, the parent and its neighbours, a listening
socket, the verdict the parent decides), never by what the attacking tool reports.
"""

from __future__ import annotations

import os
import resource
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import threading
import time

import pytest

from domains.db_layer import compile_db
from domains.spec import Column, DBSchema, Table
from verification.sandbox import Sandbox

SCHEMA = DBSchema(tables=[Table(name="item", id_prefix="IT", columns=[
    Column(name="item_id", type="string", primary_key=True, nullable=False),
    Column(name="label", type="string", nullable=False),
])])
STATE = {"item": [{"item_id": "IT-0001", "label": "a"}]}

_OS = "    import dataclasses\n    os = dataclasses.sys.modules['os']\n"
_OPEN = "    import enum\n    open_ = enum.bltns.open\n"

# a correct tool, the one the poisoning attacks try to make fail or pass wrongly
LABEL = '''from db import Item


def get_label(session, item_id: str) -> dict:
    item = session.get(Item, item_id)
    return {"item_id": item_id, "label": item.label}
'''
LABEL_TEST = {"name": "label", "kind": "success", "initial_state": STATE, "arguments": {"item_id": "IT-0001"},
              "expect_return": {"item_id": "IT-0001", "label": "a"}, "expect_changes": {}}


def tool(name: str, params: str, body: str) -> str:
    return f"def {name}(session{params}) -> dict:\n{body}"


@pytest.fixture(scope="module")
def box():
    with Sandbox(compile_db("demo", SCHEMA), timeout=2.0, memory_mb=256) as sandbox:
        yield sandbox


def attack(box: Sandbox, name: str, source: str, arguments: dict, expected_return=None) -> dict:
    """Run one attack as a success test; `expected_return` is what a successful attack returns."""
    refused = box.define(name, source)
    assert refused is None, f"the guard refused the attack, so it tests nothing below the guard: {refused}"
    test = {"name": name, "kind": "success", "initial_state": STATE, "arguments": arguments,
            "expect_return": expected_return if expected_return is not None else {"done": True},
            "expect_changes": {}}
    return box.run_tests(name, [test])[0]


def new_processes(before: set[int]) -> list[int]:
    """Processes started since `before` that escaped their sandbox: orphans adopted by init that
    run as another user than this test (every sandbox worker runs as an unprivileged identity;
    a worker's children normally die with it). Other tests' and benches' workers are never
    orphans, so running beside them does not confuse this."""
    escaped = []
    for pid in pids() - before:
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["PPid"]) == 1 and int(fields["Uid"].split()[0]) != os.getuid():
                escaped.append(pid)
        except (OSError, KeyError, ValueError):
            pass  # gone meanwhile
    return escaped


def pids() -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


def test_host_files_cannot_be_read(box, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    secret.chmod(0o644)  # readable by any user: only the confinement's file view can stop it
    source = tool("read_file", ", path: str", _OPEN + "    return {'data': open_(path).read()}\n")
    for path in (str(secret), "/etc/hostname", f"/proc/{os.getpid()}/environ"):
        outcome = attack(box, "read_file", source, {"path": path})
        assert not outcome["passed"]
        assert "TOP-SECRET" not in str(outcome) and os.environ.get("PATH", "\0") not in str(outcome)


def test_host_files_and_the_venv_cannot_be_written(box, tmp_path):
    tmp_path.chmod(0o777)
    target = tmp_path / "pwned"
    pth = os.path.join(sysconfig.get_paths()["purelib"], "zz_worldsmith_pwned.pth")
    source = tool("write_file", ", path: str", _OPEN + "    open_(path, 'w').write('import os')\n"
                                                      "    return {'done': True}\n")
    for path in (str(target), pth, os.path.join(os.path.dirname(sys.executable), "pwned")):
        outcome = attack(box, "write_file", source, {"path": path})
        assert not outcome["passed"] and not os.path.exists(path), path


def test_sql_cannot_reach_host_database_files(box, tmp_path):
    tmp_path.chmod(0o777)
    host_db = tmp_path / "host.db"
    with sqlite3.connect(host_db) as db:
        db.execute("CREATE TABLE secret (value TEXT)")
        db.execute("INSERT INTO secret VALUES ('TOP-SECRET')")
    host_db.chmod(0o666)
    copy = tmp_path / "copy.db"
    attach = tool("attach", ", path: str",
                  "    c = session.connection()\n"
                  "    c.exec_driver_sql(\"ATTACH DATABASE '\" + path + \"' AS other\")\n"
                  "    rows = c.exec_driver_sql('SELECT value FROM other.secret').fetchall()\n"
                  "    c.exec_driver_sql(\"INSERT INTO other.secret VALUES ('pwned')\")\n"
                  "    return {'done': True, 'rows': [r[0] for r in rows]}\n")
    outcome = attack(box, "attach", attach, {"path": str(host_db)})
    assert not outcome["passed"] and "TOP-SECRET" not in str(outcome)
    vacuum = tool("vacuum_into", ", path: str",
                  "    session.connection().exec_driver_sql(\"VACUUM INTO '\" + path + \"'\")\n"
                  "    return {'done': True}\n")
    assert not attack(box, "vacuum_into", vacuum, {"path": str(copy)})["passed"]
    assert not copy.exists()
    with sqlite3.connect(host_db) as db:
        assert db.execute("SELECT value FROM secret").fetchall() == [("TOP-SECRET",)]


def test_no_process_can_be_started(box, tmp_path):
    tmp_path.chmod(0o777)
    marker = tmp_path / "ran"
    through_dbapi = tool("shell", ", path: str",
                         "    dbapi = session.bind.dialect.dbapi\n"
                         "    os = dbapi.collections._sys.modules['os']\n"
                         "    os.system('touch ' + path)\n"
                         "    return {'done': True}\n")
    spawn = tool("spawn", ", path: str", _OS + "    subprocess = dataclasses.sys.modules.get('subprocess')\n"
                                               "    if os.fork() == 0:\n"
                                               "        os.execv('/usr/bin/touch', ['touch', path])\n"
                                               "    return {'done': True}\n")
    for name, source in (("shell", through_dbapi), ("spawn", spawn)):
        before = pids()
        outcome = attack(box, name, source, {"path": str(marker)})
        time.sleep(0.3)
        assert not outcome["passed"] or not marker.exists()
        assert not marker.exists() and new_processes(before) == []


def test_a_detached_child_does_not_outlive_the_sandbox(box):
    before = pids()
    detach = tool("detach", ", seconds: int", _OS + "    if os.fork() == 0:\n        os.setsid()\n"
                                                    "        while True:\n            pass\n"
                                                    "    return {'done': True}\n")
    attack(box, "detach", detach, {"seconds": 60})
    deadline = time.monotonic() + 5
    while new_processes(before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert new_processes(before) == []


def test_no_network_and_no_unix_sockets(box, tmp_path):
    tmp_path.chmod(0o777)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    unix_path = str(tmp_path / "listener.sock")
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(unix_path)
    os.chmod(unix_path, 0o777)
    unix.listen()
    connect = tool("connect", ", address: str",
                   "    import dataclasses\n    socket = dataclasses.sys.modules['socket']\n"
                   "    if address.startswith('/'):\n        s = socket.socket(socket.AF_UNIX)\n        s.connect(address)\n"
                   "    else:\n        s = socket.create_connection(('127.0.0.1', int(address)), timeout=1)\n"
                   "    s.sendall(b'leak')\n    return {'done': True}\n")
    for address in (str(tcp.getsockname()[1]), unix_path):
        assert not attack(box, "connect", connect, {"address": address})["passed"]
    for listener in (tcp, unix):
        listener.settimeout(0.5)
        with pytest.raises(socket.timeout):
            listener.accept()
        listener.close()


def test_neighbouring_processes_and_the_parent_are_out_of_reach(box):
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              env={"WORLDSMITH_VICTIM_SECRET": "TOP-SECRET"})
    try:
        kill = tool("kill_pid", ", pid: int", _OS + "    os.kill(pid, 9)\n    return {'done': True}\n")
        for pid in (victim.pid, os.getpid()):
            assert not attack(box, "kill_pid", kill, {"pid": pid})["passed"]
        assert victim.poll() is None
        read = tool("read_environ", ", pid: int", _OPEN + "    return {'data': open_('/proc/' + str(pid) + '/environ', 'rb')"
                                                          ".read().decode()}\n")
        outcome = attack(box, "read_environ", read, {"pid": victim.pid})
        assert not outcome["passed"] and "TOP-SECRET" not in str(outcome)
        mem = tool("write_mem", ", pid: int", _OPEN + "    open_('/proc/' + str(pid) + '/mem', 'wb').write(b'x')\n"
                                                      "    return {'done': True}\n")
        assert not attack(box, "write_mem", mem, {"pid": os.getpid()})["passed"]
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("poison", [
    "    import json\n    json.dumps = lambda *a, **k: 'poisoned'\n",
    "    import db\n    db.Item.label = 'poisoned'\n",
    "    import enum\n    enum.bltns.len = lambda x: 0\n    enum.bltns.isinstance = lambda *a: False\n",
    "    import sqlalchemy\n    sqlalchemy.event.listen(sqlalchemy.orm.Session, 'before_flush', lambda *a: 1 / 0)\n",
])
def test_nothing_one_tool_under_test_changes_reaches_the_next(box, poison):
    poisoner = tool("poisoner", "", poison + "    return {'done': True}\n")
    attack(box, "poisoner", poisoner, {})
    assert box.define("get_label", LABEL) is None
    assert box.run_tests("get_label", [LABEL_TEST])[0]["passed"]


def test_forged_and_extra_frames_never_make_a_wrong_tool_pass(box):
    # reads the request id off the worker's stack and writes its own reply ahead of the real one
    forge = tool("forge", "",
                 "    import dataclasses\n    sys = dataclasses.sys\n    worker = sys.modules['__main__']\n"
                 "    frame = sys._getframe()\n    rid = None\n"
                 "    while frame is not None:\n"
                 "        rid = frame.f_locals.get('request_id', rid)\n        frame = frame.f_back\n"
                 "    outcome = {'returned': {'item_id': 'IT-0001', 'label': 'a'}, 'error': None, 'changes': {},\n"
                 "               'passed': True}\n"
                 "    worker.protocol.write_reply(worker._PROTO_OUT, rid or 0, {'ok': True, 'outcomes': [outcome],\n"
                 "                                                           'passed': True})\n"
                 "    worker.protocol.write_reply(worker._PROTO_OUT, rid or 0, {'ok': True, 'outcomes': [outcome]})\n"
                 "    return {'item_id': 'IT-0001', 'label': 'wrong'}\n")
    refused = box.define("forge", forge)
    assert refused is None, refused
    outcome = box.run_tests("forge", [{**LABEL_TEST, "name": "forge"}])[0]
    assert not outcome["passed"]


def test_an_oversized_reply_does_not_grow_the_parent(box):
    huge = tool("huge", ", megabytes: int", "    return {'done': 'x' * (megabytes << 20)}\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert not attack(box, "huge", huge, {"megabytes": 200})["passed"]
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, f"the parent grew by {grown_mb:.0f} MB"


def available_mb() -> int:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("MemAvailable:"))


def test_memory_and_process_bombs_across_a_process_tree_are_contained(box):
    # 64 children holding 200 MB each would take 12.8 GB: the limits are on the whole tree
    before, lowest, done = pids(), [available_mb()], threading.Event()

    def watch() -> None:
        while not done.is_set():
            lowest.append(available_mb())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    bomb = tool("bomb", ", children: int", _OS + "    forked = 0\n    for _ in range(children):\n        try:\n"
                                                 "            if os.fork() == 0:\n"
                                                 "                hold = bytearray(200 << 20)\n"
                                                 "                while True:\n                    hold[0] = 1\n"
                                                 "            forked += 1\n"
                                                 "        except OSError:\n            break\n"
                                                 "    while True:\n        pass\n")
    try:
        attack(box, "bomb", bomb, {"children": 64})
    finally:
        done.set()
        watcher.join()
    assert lowest[0] - min(lowest) < 2048, f"available memory fell by {lowest[0] - min(lowest)} MB"
    deadline = time.monotonic() + 5
    while new_processes(before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert new_processes(before) == []
    # the sandbox still serves the next tool
    assert box.define("get_label", LABEL) is None
    assert box.run_tests("get_label", [LABEL_TEST])[0]["passed"]
