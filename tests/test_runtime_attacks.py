"""Generated code written to do harm, served in episodes: each attack is judged by evidence outside
the episode's process (files on the host, other episodes' state and processes, the server's
own memory, a listening socket), never by what the attacking tool reports.

Every attack tool passes the AST guard: it reaches `os`, `open` and `socket` through modules
the guard allows, as the attacks on the old in-process sandbox did.

Attacks across episodes, on host files and on the network run twice: with every layer, and
with the OS layers alone (bubblewrap's namespaces around the template, a uid per episode) while
Landlock, seccomp and non-dumpable processes are left off, so each set is shown to stop them.
"""

from __future__ import annotations

import os
import resource
import socket
from pathlib import Path

import pytest

from mcp_servers import pool
from mcp_servers.runtime import Environment
from sandbox import probe as confine
from tests.support.fixture_domain import DUNE, EMMA, domain_with_tools

_OS = "    import dataclasses\n    _d = dataclasses\n    os = _d.sys.modules['os']\n"
_OPEN = "    import enum\n    _e = enum\n    open_ = _e.bltns.open\n"
_FDS = _OS + ("    stat = _d.sys.modules['stat']\n    socks, files = [], []\n    for fd in range(3, 64):\n"
              "        try:\n            (socks if stat.S_ISSOCK(os.fstat(fd).st_mode) else files).append(fd)\n"
              "        except OSError:\n            pass\n")


def _tool(name: str, params: dict[str, str], body: str) -> tuple[dict[str, str], str]:
    args = "".join(f", {p}: {'str' if t == 'string' else 'int'}" for p, t in params.items())
    return params, f"def {name}(session{args}) -> dict:\n{body}"


TOOLS = dict([
    ("read_file", _tool("read_file", {"path": "string"}, _OPEN + "    return {'data': open_(path, 'rb').read(4096).hex()}\n")),
    ("write_file", _tool("write_file", {"path": "string"},
                         _OPEN + "    open_(path, 'ab').write(b'pwned')\n    return {'written': path}\n")),
    ("kill_pid", _tool("kill_pid", {"pid": "integer"}, _OS + "    os.kill(pid, 9)\n    return {'killed': pid}\n")),
    ("spawn", _tool("spawn", {"count": "integer"},
                    _OS + "    for _ in range(count):\n        if os.fork() == 0:\n"
                    "            os.pause()\n            os._exit(0)\n    return {'spawned': count}\n")),
    ("connect", _tool("connect", {"address": "string"},
                      _OS + "    import dataclasses\n    _d = dataclasses\n    socket = _d.sys.modules['socket']\n"
                      "    if address.startswith('/'):\n        s = socket.socket(socket.AF_UNIX)\n        s.connect(address)\n"
                      "    else:\n        s = socket.create_connection(('127.0.0.1', int(address)), timeout=1)\n"
                      "    s.sendall(b'leak')\n    return {'connected': address}\n")),
    ("attach", _tool("attach", {"path": "string"},
                     "    c = session.connection()\n"
                     "    c.exec_driver_sql(\"ATTACH DATABASE '\" + path + \"' AS other\")\n"
                     "    return {'attached': path}\n")),
    ("vacuum_into", _tool("vacuum_into", {"path": "string"},
                          "    session.connection().exec_driver_sql(\"VACUUM INTO '\" + path + \"'\")\n"
                          "    return {'copied': path}\n")),
    ("poison", _tool("poison", {"title": "string"},
                     "    import json\n    import db\n    json.dumps = lambda *a, **k: '\"poisoned\"'\n"
                     "    db.now = lambda s: 'poisoned'\n    db.next_id = lambda s, m: 'POISONED'\n"
                     + _OPEN + "    open_('marker', 'w').write('left behind')\n    return {'poisoned': True}\n")),
    ("forge_frames", _tool("forge_frames", {"count": "integer"},
                           _FDS + "    struct = _d.sys.modules['struct']\n    sent = 0\n    for fd in socks:\n        try:\n"
                           "            for n in range(count):\n"
                           "                body = b'{\"result\": {\"forged\": true}}'\n"
                           "                os.write(fd, struct.pack('>IQ', len(body), n) + body)\n"
                           "            sent += 1\n        except OSError:\n            pass\n"
                           "    return {'fds': sent}\n")),
    ("huge_frame", _tool("huge_frame", {"count": "integer"},
                         _FDS + "    struct = _d.sys.modules['struct']\n    for fd in socks:\n        try:\n"
                         "            os.write(fd, struct.pack('>IQ', 2_000_000_000, count) + b'x' * 65536)\n"
                         "        except OSError:\n            pass\n    return {'ok': True}\n")),
    ("wreck_files", _tool("wreck_files", {"count": "integer"},
                          _FDS + "    for fd in files:\n        try:\n            os.pwrite(fd, b'garbage' * 4096, 0)\n"
                          "        except OSError:\n            pass\n    return {'wrecked': files}\n")),
    ("memory_bomb", _tool("memory_bomb", {"megabytes": "integer"},
                          "    blocks = []\n    for _ in range(megabytes):\n        blocks.append(bytearray(1 << 20))\n"
                          "    return {'held': len(blocks)}\n")),
    ("raw_connect", _tool("raw_connect", {"address": "string"},
                          _OS + "    _socket = _d.sys.modules['_socket']\n    if address.startswith('/'):\n"
                          "        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)\n        s.connect(address)\n"
                          "    else:\n        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\n"
                          "        s.connect(('127.0.0.1', int(address)))\n    s.send(b'leak')\n"
                          "    return {'connected': address}\n")),
    ("setns_connect", _tool("setns_connect", {"address": "string"},
                            _OS + "    libc = _d.sys.modules['ctypes'].CDLL(None, use_errno=True)\n"
                            "    for pid in ('1', str(os.getppid())):\n        try:\n"
                            "            fd = os.open('/proc/' + pid + '/ns/net', os.O_RDONLY)\n"
                            "        except OSError:\n            continue\n"
                            "        if libc.setns(fd, 0) == 0:\n            break\n"
                            "    _socket = _d.sys.modules['_socket']\n"
                            "    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\n"
                            "    s.connect(('127.0.0.1', int(address)))\n    s.send(b'leak')\n"
                            "    return {'connected': address}\n")),
    ("unguarded_sql", _tool("unguarded_sql", {"path": "string"},
                            "    raw = session.connection().connection.dbapi_connection\n    raw.set_authorizer(None)\n"
                            "    raw.execute(\"ATTACH DATABASE '\" + path + \"' AS h\")\n"
                            "    return {'rows': [list(r) for r in raw.execute('SELECT * FROM h.book')]}\n")),
    ("direct_sql", _tool("direct_sql", {"path": "string"},
                         "    raw = session.bind.dialect.dbapi.connect(path)\n"
                         "    raw.execute(\"UPDATE book SET title = 'pwned'\")\n    raw.commit()\n"
                         "    return {'rows': [list(r) for r in raw.execute('SELECT * FROM book')]}\n")),
    ("write_mem", _tool("write_mem", {"pid": "integer"},
                        _OPEN + "    f = open_('/proc/' + str(pid) + '/mem', 'r+b')\n    f.seek(4096)\n    f.write(b'x')\n"
                        "    return {'written': pid}\n")),
    ("setsid_bomb", _tool("setsid_bomb", {"count": "integer"},
                          _OS + "    for _ in range(count):\n        if os.fork() == 0:\n            os.setsid()\n"
                          "            held = bytearray(1 << 30)\n            os.pause()\n"
                          "    return {'spawned': count}\n")),
    ("ptrace_parent", _tool("ptrace_parent", {"pid": "integer"},
                            _OPEN + "    return {'environ': open_('/proc/' + str(pid) + '/environ', 'rb').read().hex()}\n")),
    ("ptrace_seize", _tool("ptrace_seize", {"pid": "integer"},
                           _OS + "    ctypes = _d.sys.modules['ctypes']\n    libc = ctypes.CDLL(None, use_errno=True)\n"
                           "    if libc.ptrace(0x4206, pid, 0, 0) != 0:\n"  # PTRACE_SEIZE: traced, not stopped
                           "        raise OSError(ctypes.get_errno(), 'ptrace')\n    return {'traced': pid}\n")),
    ("read_mem", _tool("read_mem", {"pid": "integer"},  # forked from one template: its own map is the victim's
                       _OS + _OPEN + "    found = []\n    mem = os.open('/proc/' + str(pid) + '/mem', os.O_RDONLY)\n"
                       "    for line in open_('/proc/self/maps').read().splitlines():\n"
                       "        span, perms = line.split()[:2]\n        if not perms.startswith('rw'):\n"
                       "            continue\n        start, end = [int(x, 16) for x in span.split('-')]\n"
                       "        try:\n            data = os.pread(mem, min(end - start, 1 << 26), start)\n"
                       "        except OSError:\n            continue\n        at = data.find(b'SECRET-')\n"
                       "        if at >= 0:\n            found.append(data[at:at + 40].decode('latin1'))\n"
                       "    return {'found': found}\n")),
    ("fill_disk", _tool("fill_disk", {"megabytes": "integer"},
                        _OPEN + "    for n in range(megabytes // 8):\n        with open_('fill' + str(n), 'wb') as f:\n"
                        "            f.write(b'x' * (8 << 20))\n    return {'written': megabytes}\n")),
    ("list_dir", _tool("list_dir", {"path": "string"}, _OS + "    return {'names': os.listdir(path)}\n")),
    ("connect_abstract", _tool("connect_abstract", {"name": "string"},
                               _OS + "    _socket = _d.sys.modules['_socket']\n"
                               "    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)\n"
                               "    s.connect('\\0' + name)\n    s.send(b'leak')\n    return {'connected': name}\n")),
])

# The layers the OS-only runs leave off: what is left is the namespaces and the uid per episode.
OS_ONLY = frozenset({"landlock", "seccomp", "dumpable"})
DISK_MB = 32


@pytest.fixture(scope="module")
def env(fixture_domain, tmp_path_factory):
    domain = domain_with_tools(fixture_domain, tmp_path_factory.mktemp("attacks"), TOOLS)
    with Environment(domain, call_timeout=2.0, memory_mb=256, disk_mb=DISK_MB) as environment:
        yield environment


@pytest.fixture(scope="module")
def os_env(fixture_domain, tmp_path_factory):
    """Episodes with the OS layers alone: Landlock, seccomp and non-dumpable processes left off."""
    domain = domain_with_tools(fixture_domain, tmp_path_factory.mktemp("os-attacks"), TOOLS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool, "POLICY", pool.POLICY.without(*OS_ONLY))
        environment = Environment(domain, call_timeout=2.0, memory_mb=256, disk_mb=DISK_MB)
    with environment:
        missing = [name for name in ("namespaces", "identity") if not environment.pool.layers[name]]
        if missing and not OS_ONLY & {"namespaces", "identity"}:  # missing here, not left off by a check
            pytest.skip(f"episode processes get no {' and no '.join(missing)} here (bubblewrap; a server run as root)")
        yield environment


def _pair(env):
    attacker, victim = env.create_episode("finish_dune"), env.create_episode("finish_dune")
    assert victim.call("add_book", {"title": "SECRET-TITLE", "author": "V"}).ok
    return attacker, victim


@pytest.fixture
def pair(env):
    """An attacker episode and a victim episode with a committed secret."""
    attacker, victim = _pair(env)
    yield attacker, victim
    attacker.close()
    victim.close()


@pytest.fixture(params=["every layer", "OS layers alone"])
def layered(request):
    """(env, attacker, victim), with every layer and with the OS layers alone."""
    environment = request.getfixturevalue("env" if request.param == "every layer" else "os_env")
    attacker, victim = _pair(environment)
    yield environment, attacker, victim
    attacker.close()
    victim.close()


def _db_path(env, episode) -> str:
    return os.path.join(env.pool._proc(episode.id).dir, "db")


def test_an_episode_cannot_read_or_write_another_episodes_database(layered):
    env, attacker, victim = layered
    expected = victim.state()
    assert not attacker.call("list_dir", {"path": os.path.dirname(_db_path(env, victim))}).ok
    for target in (_db_path(env, victim), _db_path(env, victim) + "-wal"):
        read = attacker.call("read_file", {"path": target})
        assert not read.ok and "SECRET" not in read.text and bytes.hex(b"SECRET") not in read.text
        assert not attacker.call("write_file", {"path": target}).ok
    for tool in ("attach", "vacuum_into", "unguarded_sql", "direct_sql"):
        out = attacker.call(tool, {"path": _db_path(env, victim)})
        assert not out.ok and "SECRET" not in out.text, out
    assert victim.state() == expected
    assert attacker.state() == {"book": [DUNE, EMMA]}


def test_an_episode_cannot_touch_host_files(layered, tmp_path):
    env, attacker, _ = layered
    host_file = tmp_path / "host.txt"
    host_file.write_text("host data")
    os.chmod(tmp_path, 0o755)  # open to any uid: only the confinement stands in the way
    root = Path(env.pool.root)  # the pool's own files: the tools' code, template databases, the log
    for path in (host_file, "/etc/passwd", "/etc/hostname", root / "init.json", root / "template.log",
                 next((root / "templates").glob("*.db"))):
        out = attacker.call("read_file", {"path": str(path)})
        assert not out.ok and "host data" not in out.text and "root:" not in out.text, (path, out)
    for path in (root, root / "episodes", root / "templates", tmp_path):
        assert not attacker.call("list_dir", {"path": str(path)}).ok, path
    listed = attacker.call("list_dir", {"path": "/etc"})  # refused, or the sandbox's own /etc
    assert not listed.ok or not {"passwd", "hostname", "hosts"} & set(listed.result["names"]), listed
    planted = tmp_path / "planted.pth"
    for path in (str(host_file), str(planted), str(Path(os.__file__).parent / "worldsmith_planted.pth"),
                 str(root / "planted"), str(root / "episodes" / "planted")):
        assert not attacker.call("write_file", {"path": path}).ok, path
    assert not (root / "planted").exists() and not (root / "episodes" / "planted").exists()
    assert not attacker.call("vacuum_into", {"path": str(tmp_path / "copy.db")}).ok
    assert host_file.read_text() == "host data"
    assert not planted.exists() and not (tmp_path / "copy.db").exists()
    assert not (Path(os.__file__).parent / "worldsmith_planted.pth").exists()


def test_an_episode_cannot_reach_the_server_or_other_processes(env, pair):
    attacker, victim = pair
    victim_pid, template_pid = env.pool.pid(victim.id), env.pool._template.pid
    assert not attacker.call("ptrace_parent", {"pid": os.getpid()}).ok  # the server's environment (API keys)
    for pid in (victim_pid, template_pid, os.getpid()):
        assert not attacker.call("write_mem", {"pid": pid}).ok
    for pid in (victim_pid, template_pid, os.getpid()):
        assert not attacker.call("kill_pid", {"pid": pid}).ok
    assert env.pool.pid(victim.id) == victim_pid and env.pool.template_alive()
    assert "SECRET-TITLE" in [b["title"] for b in victim.state()["book"]]


def test_an_episode_has_no_network_and_no_unix_sockets(layered, tmp_path):
    _env, attacker, _ = layered
    os.chmod(tmp_path, 0o755)
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))
    os.chmod(tmp_path / "s.sock", 0o777)
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX)
    name = f"worldsmith-test-{os.getpid()}-{id(tmp_path)}"
    abstract.bind("\0" + name)
    abstract.listen()
    try:
        port = str(tcp.getsockname()[1])
        for tool, address in (("connect", port), ("connect", str(tmp_path / "s.sock")), ("raw_connect", port),
                              ("raw_connect", str(tmp_path / "s.sock")), ("setns_connect", port)):
            out = attacker.call(tool, {"address": address})
            assert not out.ok, out
        assert not attacker.call("connect_abstract", {"name": name}).ok
        for listener in (tcp, unix, abstract):
            listener.settimeout(0.2)
            with pytest.raises(TimeoutError):
                listener.accept()  # nobody connected
    finally:
        tcp.close()
        unix.close()
        abstract.close()


def test_each_episode_runs_as_its_own_uid_without_privileges_in_the_templates_namespaces(env, pair):
    if os.geteuid() != 0 or not confine.layers()["namespaces"]:
        pytest.skip(f"a uid per episode needs a server run as root, namespaces need bubblewrap: {confine.describe()}")
    status = {e.id: _status(env.pool.pid(e.id)) for e in pair}
    uids = {episode: s["Uid"] for episode, s in status.items()}
    assert len(set(uids.values())) == 2 and all(len(set(u.split())) == 1 for u in uids.values())
    for s in status.values():
        assert int(s["Uid"].split()[0]) not in (0, os.getuid()) and s["Gid"].split()[0] == s["Uid"].split()[0]
        assert s["Groups"] == "" and s["NoNewPrivs"] == "1" and s["Seccomp"] == "2"
        assert int(s["CapPrm"], 16) == int(s["CapEff"], 16) == int(s["CapAmb"], 16) == 0
    for episode in pair:
        for ns in ("mnt", "pid", "net", "ipc", "uts"):
            assert os.readlink(f"/proc/{env.pool.pid(episode.id)}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}")
        assert Path(_db_path(env, episode)).stat().st_uid == int(uids[episode.id].split()[0])
        assert Path(_db_path(env, episode)).parent.stat().st_mode & 0o777 == 0o700


def test_an_episode_cannot_signal_trace_or_read_the_memory_of_another(layered):
    env, attacker, victim = layered
    victim_pid = env.pool.pid(victim.id)
    template_pid = int(_status(victim_pid)["PPid"])
    environ = Path(f"/proc/{victim_pid}/environ").read_bytes()  # as the server sees it
    assert environ and b"SECRET-TITLE" in _memory(victim_pid)  # what a leak would carry
    for pid in (_ns_pid(victim_pid), _ns_pid(template_pid)):  # as the attacker's namespace numbers them
        for tool in ("ptrace_parent", "read_mem", "ptrace_seize", "write_mem"):
            out = attacker.call(tool, {"pid": pid})
            assert not out.ok and "SECRET" not in out.text and environ.hex() not in out.text, (tool, out)
        assert _status(victim_pid)["TracerPid"] == "0" and _status(template_pid)["TracerPid"] == "0"
        assert not attacker.call("kill_pid", {"pid": pid}).ok
    assert env.pool.pid(victim.id) == victim_pid and env.pool.template_alive()
    assert "SECRET-TITLE" in [b["title"] for b in victim.state()["book"]]


def test_an_episode_cannot_start_processes(env, pair):
    attacker, _ = pair
    before = _descendants(env.pool._template.pid)
    out = attacker.call("spawn", {"count": 20})
    assert not out.ok and "Operation not permitted" in out.error
    out = attacker.call("setsid_bomb", {"count": 30})
    assert not out.ok, out
    assert _descendants(env.pool._template.pid) == before


def test_nothing_an_episode_changes_persists_into_the_next(env):
    with env.create_episode("finish_dune") as first:
        first.call("poison", {"title": "x"})  # its own replies are now garbage: its own loss
    with env.create_episode("finish_dune") as second:
        out = second.call("add_book", {"title": "Clean", "author": "A"})
        assert out.ok and out.result == {"book_id": "BK-0003"} and "poisoned" not in out.text
        assert second.state()["book"][-1]["added_at"].startswith("20")
        assert second.call("read_file", {"path": "marker"}).error_type == "FileNotFoundError"


def test_forged_and_extra_frames_cost_only_the_forging_episode(env, pair):
    attacker, victim = pair
    expected = victim.state()
    for tool in ("forge_frames", "huge_frame"):
        out = attacker.call(tool, {"count": 3})
        assert not out.ok and out.error_type == "ProtocolError", out
        assert attacker.call("get_book", {"book_id": "BK-0001"}).result["title"] == "Dune"
    assert victim.call("get_book", {"book_id": "BK-0001"}).result["title"] == "Dune"
    assert victim.state() == expected


def test_a_tool_that_wrecks_its_own_database_files_costs_only_its_own_episode(env, pair):
    attacker, victim = pair
    expected = victim.state()
    assert attacker.call("add_book", {"title": "Mine", "author": "A"}).ok
    attacker.call("wreck_files", {"count": 1})
    out = attacker.call("get_book", {"book_id": "BK-0001"})
    if not out.ok:  # the wreck was noticed on this call: the episode says what it lost
        assert "restarted from its initial state" in out.error
    assert attacker.state() in ({"book": [DUNE, EMMA]}, {"book": [DUNE, EMMA, attacker.state()["book"][-1]]})
    assert victim.state() == expected


def test_oversized_results_and_memory_bombs_do_not_reach_the_server(env, pair):
    attacker, victim = pair
    grown_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = attacker.call("memory_bomb", {"megabytes": 2048})
    assert not out.ok and out.error_type in ("MemoryLimit", "WorkerCrashed"), out
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown_before) < 100_000  # KiB: the server did not grow
    assert attacker.state() == {"book": [DUNE, EMMA]}
    assert "SECRET-TITLE" in [b["title"] for b in victim.state()["book"]]


def test_an_episode_cannot_fill_the_memory_other_episodes_files_live_in(layered):
    env, attacker, victim = layered
    if os.geteuid() != 0:
        pytest.skip("a size limit per episode directory needs a server run as root")
    attacker.call("fill_disk", {"megabytes": 4 * DISK_MB})  # its own files: it may fail or not
    own = Path(_db_path(env, attacker)).parent
    assert sum(f.stat().st_size for f in own.iterdir()) <= (DISK_MB << 20)
    assert victim.call("add_book", {"title": "After", "author": "V"}).ok
    assert [b["title"] for b in victim.state()["book"]][-2:] == ["SECRET-TITLE", "After"]


def test_without_bubblewrap_episodes_keep_their_own_layers_and_the_server_says_so(fixture_domain, tmp_path,
                                                                                  monkeypatch, capfd):
    found = dict(confine.layers(), namespaces=False)
    monkeypatch.setitem(confine._probes, True, found)
    monkeypatch.setattr(pool, "_told", set())
    domain = domain_with_tools(fixture_domain, tmp_path, TOOLS)
    with Environment(domain, call_timeout=2.0, memory_mb=256) as environment:
        assert "without bubblewrap's namespaces" in capfd.readouterr().err
        assert not environment.pool.layers["namespaces"]
        with environment.create_episode("finish_dune") as episode:
            assert episode.call("add_book", {"title": "Fine", "author": "A"}).ok
            assert not episode.call("read_file", {"path": "/etc/passwd"}).ok


def test_a_machine_that_cannot_confine_refuses_to_serve_generated_code(fixture_domain, tmp_path,
                                                                       monkeypatch):
    nothing = {"namespaces": False, "identity": False, "landlock": False, "seccomp": False, "cgroup": False,
               "rlimits": True}
    monkeypatch.setitem(confine._probes, True, nothing)
    monkeypatch.setitem(confine._probes, False, nothing)
    monkeypatch.delenv(confine.UNSAFE_FLAG, raising=False)
    with pytest.raises(confine.ConfinementUnavailable, match=confine.UNSAFE_FLAG):
        Environment(domain_with_tools(fixture_domain, tmp_path, TOOLS))


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def _ns_pid(pid: int) -> int:
    """The pid in its own (innermost) PID namespace."""
    return int(_status(pid)["NSpid"].split()[-1])


def _memory(pid: int) -> bytes:
    """The writable memory of a process, read from outside (the server is root or its owner)."""
    data = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if perms.startswith("rw"):
                try:
                    data.append(os.pread(mem.fileno(), end - start, start))
                except OSError:
                    pass
    return b"".join(data)


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").iterdir():
            for child in (task / "children").read_text().split():
                out.add(int(child))
                todo.append(int(child))
    return out
