"""The Landlock layer: read beneath the readable paths, write beneath the writable ones, nothing
else; no TCP bind or connect; no signals to, or abstract Unix sockets of, processes outside it."""

from __future__ import annotations

import ctypes
import os
import struct

from sandbox.policy import Rules

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446
_CREATE_RULESET_VERSION, _RULE_PATH_BENEATH = 1, 1
_FILE_RIGHTS = 1 | 2 | 4 | (1 << 14) | (1 << 15)  # execute, write, read, truncate, ioctl_dev: what a file takes


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (the one probe of it)."""
    return max(ctypes.CDLL(None).syscall(_CREATE, None, 0, _CREATE_RULESET_VERSION), 0)


def restrict(rules: Rules, readable: list[str], writable: list[str]) -> bool:
    """Restrict the calling process for good; False where the kernel has no Landlock."""
    version = abi()
    if version < 1:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    fs = (1 << 13) - 1 | (1 << 13 if version >= 2 else 0) | (1 << 14 if version >= 3 else 0) \
        | (1 << 15 if version >= 5 else 0)
    net = 3 if version >= 4 else 0  # bind and connect TCP: handled with no rule, so refused
    scoped = 3 if version >= 6 else 0  # abstract Unix sockets and signals stay inside the domain
    attr = struct.pack("<QQQ", fs, net, scoped)[: 8 if version < 4 else 16 if version < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(_CREATE, buf, len(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for paths, rights in ((readable, rules.landlock_read), (writable, rules.landlock_write)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = rights & fs
                    if not os.path.isdir(path):
                        allowed &= _FILE_RIGHTS
                    rule = ctypes.create_string_buffer(struct.pack("<Qi", allowed, fd), 12)
                    if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0) != 0:
                        raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
                finally:
                    os.close(fd)
        if libc.syscall(_RESTRICT, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        return True
    finally:
        os.close(ruleset)
