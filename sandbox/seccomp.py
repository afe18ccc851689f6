"""The seccomp layer: a classic BPF filter built from the policy's rules, installed on the caller.

Built here rather than through libseccomp: its Python bindings find the library by running
ldconfig, which a confined process cannot do.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

from sandbox.policy import Rules

AUDIT_ARCH_X86_64 = 0xC000003E
_RET_ALLOW, _RET_KILL = 0x7FFF0000, 0x80000000
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_SECCOMP, _SET_MODE_FILTER, _FILTER_FLAG_TSYNC = 317, 1, 1

platform.machine()  # cached now: a confined process may not be able to ask later


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _eperm() -> int:
    return 0x00050000 | errno.EPERM


def program(rules: Rules, me: int) -> list[bytes]:
    """The filter: any other architecture is killed, x32 numbers and denied calls get EPERM, and
    signals reach only the caller's own process (`me`), as do ioctls other than those refused."""
    prog = [_op(_LD, 4), _op(_JEQ, AUDIT_ARCH_X86_64, 1, 0), _op(_RET, _RET_KILL), _op(_LD, 0),
            _op(_JGE, 0x40000000, 0, 1), _op(_RET, _eperm())]
    for nr in sorted(rules.denied_syscalls.values()):
        prog += [_op(_JEQ, nr, 0, 1), _op(_RET, _eperm())]
    for nr in sorted(rules.self_only_signals.values()):  # args[0] (its low half) must be the caller
        prog += [_op(_JEQ, nr, 0, 4), _op(_LD, 16), _op(_JEQ, me, 0, 1), _op(_RET, _RET_ALLOW), _op(_RET, _eperm())]
    for request in sorted(rules.denied_ioctls.values()):  # reloads nr each time: the accumulator is args[1] after
        prog += [_op(_LD, 0), _op(_JEQ, 16, 0, 3), _op(_LD, 24), _op(_JEQ, request, 0, 1), _op(_RET, _eperm())]
    return prog + [_op(_RET, _RET_ALLOW)]


def install(rules: Rules) -> bool:
    """Install the filter on every thread of the calling process; False where this machine has none."""
    if platform.machine() != "x86_64":
        return False
    prog = program(rules, os.getpid())
    code = b"".join(prog)
    filters = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Prog(len(prog), ctypes.cast(filters, ctypes.c_void_p))
    return ctypes.CDLL(None, use_errno=True).syscall(_SECCOMP, _SET_MODE_FILTER, _FILTER_FLAG_TSYNC,
                                                     ctypes.byref(fprog)) == 0
