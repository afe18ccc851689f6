"""The confinement layer and the frame protocol, checked directly (attacks: test_attacks_pipeline.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sandbox import probe as confine
from sandbox import protocol
from sandbox.launch import Confinement
from sandbox.policy import ROOT, TOOL_TESTS
from sandbox.probe import ConfinementUnavailable


def test_a_confined_child_gets_every_layer_the_probe_reports():
    found = confine.layers()
    assert found["seccomp"] and (found["namespaces"] or found["landlock"]), confine.describe()
    script = ("import sys; sys.path.insert(0, %r); import json; from sandbox import launch, lockdown; "
              "print(json.dumps(lockdown.lock_down(launch.take_spec())))" % ROOT)
    proc = Confinement(TOOL_TESTS).popen([sys.executable, "-I", "-c", script], stdout=subprocess.PIPE,
                               env={"PATH": "/usr/bin:/bin"})
    out, _ = proc.communicate(timeout=60)
    Confinement.kill(proc)
    applied = set(json.loads(out))
    assert {name for name in confine.INNER_LAYERS if found[name]} <= applied


def test_without_confinement_generated_code_is_refused_unless_the_unsafe_flag_is_set(monkeypatch):
    monkeypatch.setitem(confine._probes, True, {"namespaces": False, "identity": False, "landlock": False,
                                                "seccomp": False, "cgroup": False, "rlimits": True})
    monkeypatch.delenv(confine.UNSAFE_FLAG, raising=False)
    with pytest.raises(ConfinementUnavailable, match=confine.UNSAFE_FLAG):
        Confinement(TOOL_TESTS).popen([sys.executable, "-c", "pass"])
    monkeypatch.setenv(confine.UNSAFE_FLAG, "1")
    monkeypatch.setattr(confine, "_warned", False)
    proc = Confinement(TOOL_TESTS).popen([sys.executable, "-c", "pass"])
    assert proc.wait(timeout=60) == 0
    Confinement.kill(proc)


# -- protocol ---------------------------------------------------------------------------

class Pipe:
    """A channel whose worker side is written by the test."""

    def __init__(self, max_bytes: int = 1 << 20):
        self.read_fd, self.write_fd = os.pipe()
        sink = open(os.devnull, "wb")
        self.channel = protocol.Channel(sink, self.read_fd, max_bytes)

    def worker_writes(self, data: bytes) -> None:
        os.write(self.write_fd, data)


def test_a_reply_with_the_right_id_comes_back_with_its_blob():
    pipe = Pipe()
    rid = pipe.channel.send({"op": "x"})
    pipe.worker_writes(protocol.encode(rid, {"ok": True}, b"\x00bytes"))
    assert pipe.channel.receive(rid, 5) == ({"ok": True}, b"\x00bytes")


@pytest.mark.parametrize("frame, reason", [
    (lambda rid: protocol.encode(rid ^ 1, {"ok": True}), "answered request"),
    (lambda rid: protocol.encode(rid, {"ok": True}) + protocol.encode(rid, {"ok": True}), "extra frame"),
    (lambda rid: protocol.HEADER.pack(rid, 300 << 20, 0), "over the"),
    (lambda rid: protocol.HEADER.pack(rid, 5, 0) + b"{nope", "malformed"),
    (lambda rid: protocol.encode(rid, [1, 2]), "not an object"),
])
def test_unexpected_frames_are_refused_with_a_protocol_error(frame, reason):
    pipe = Pipe()
    rid = pipe.channel.send({"op": "x"})
    pipe.worker_writes(frame(rid))
    with pytest.raises(protocol.ProtocolError, match=reason):
        pipe.channel.receive(rid, 5)


def test_a_silent_or_dead_worker_is_told_apart():
    pipe = Pipe()
    rid = pipe.channel.send({"op": "x"})
    with pytest.raises(protocol.WorkerTimeout):
        pipe.channel.receive(rid, 0.05)
    os.close(pipe.write_fd)
    with pytest.raises(protocol.WorkerGone):
        pipe.channel.receive(rid, 5)
