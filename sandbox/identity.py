"""Identity: the unprivileged uid a confined process becomes, and the capabilities it gives up.

Child side: `switch(uid)`. Parent side: `UidRange`, distinct uids for processes that live side by
side (episodes), and `reachable_by_others`, whether another uid could even open the interpreter.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import struct
import threading

UID_BASE_ENV = "WORLDSMITH_EPISODE_UID_BASE"


class IdentityError(RuntimeError):
    pass


def fresh_uid() -> int:
    """A random uid far from any a system gives out."""
    return 0x10000 + secrets.randbelow(0x7FFF0000 - 0x10000)


def reachable_by_others(paths: list[str]) -> bool:
    """Whether a process of another uid can walk to each path (no 0700 folder on the way)."""
    for path in paths:
        parent = os.path.dirname(os.path.realpath(path))
        while parent != "/":
            if not os.stat(parent).st_mode & 0o001:
                return False
            parent = os.path.dirname(parent)
    return True


def drop_capabilities() -> None:
    """Empty the bounding set, then every capability set of this process."""
    libc = ctypes.CDLL(None)
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    header = struct.pack("<Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    libc.capset(ctypes.create_string_buffer(header, 8), ctypes.create_string_buffer(24))


def capabilities() -> int:
    """Permitted, effective and ambient capabilities together (0: none)."""
    found = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("CapPrm:", "CapEff:", "CapAmb:")):
                found |= int(line.split()[1], 16)
    return found


def switch(uid: int | None) -> bool:
    """Become `uid` (its own gid, no groups, no capabilities); True when that took. A process of
    root that gets no uid keeps uid 0 but gives up every capability."""
    if os.geteuid() != 0:
        return False
    if uid is None:
        drop_capabilities()
        return False
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # every uid non-zero: the kernel clears all capabilities
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or capabilities() != 0:
        raise IdentityError("the uid switch did not take")
    drop_capabilities()  # the inheritable and bounding sets too, which the switch leaves
    return True


class UidRange:
    """A distinct unprivileged uid (used as the gid too) per live process, from a contiguous range."""

    def __init__(self, count: int) -> None:
        configured = os.environ.get(UID_BASE_ENV)
        base = int(configured, 0) if configured else 0x10000 * (1 + secrets.randbelow(0x7FEF))
        if not 1000 <= base or base + count >= 0x7FFFFFFF:
            raise IdentityError(f"{UID_BASE_ENV}={configured}: uids must lie in 1000..2**31-2 ({count} from the base)")
        self.base, self.count = base, count
        self._free = list(range(count - 1, -1, -1))
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            if not self._free:
                raise IdentityError(f"all {self.count} uids are in use")
            return self.base + self._free.pop()

    def give(self, uid: int) -> None:
        with self._lock:
            self._free.append(uid - self.base)
