"""The confined process's own layers, applied by itself before it runs untrusted code.

verification/confine.py starts the process (namespaces, cgroup) and hands it, in the
environment variable WORLDSMITH_CONFINE, what to apply here::

    import lockdown                 # stdlib only: the child imports this file by path
    applied = lockdown.lock_down()  # ["identity", "landlock", "seccomp"] where each worked

Call it once, single-threaded, after the imports and before the first byte of untrusted code.
It is irreversible. `python lockdown.py --probe` locks down and checks that each layer bites.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import struct
import sys

SPEC_ENV = "WORLDSMITH_CONFINE"
_LIBC = None


def libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def take_spec() -> dict:
    """The layers this process was started to apply, taken out of the environment."""
    return json.loads(os.environ.pop(SPEC_ENV, "{}") or "{}")


def lock_down(spec: dict | None = None) -> list[str]:
    """Apply the inner layers described by `spec` (default: WORLDSMITH_CONFINE); returns those applied.

    Call once, single-threaded, after the imports and before any untrusted code. Irreversible.
    A template that forks confined children takes the spec once and each child applies it.
    """
    spec = take_spec() if spec is None else spec
    if not spec:
        return []
    applied = []
    if _switch_identity(spec["uid"], spec["gid"], spec["readable"]):
        applied.append("identity")
    _set_limits(spec)
    libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: nothing regains privileges through exec
    if _landlock(spec["readable"], spec["writable"]):
        applied.append("landlock")
    if _seccomp():
        applied.append("seccomp")
    return applied


def _switch_identity(uid: int, gid: int, readable: list[str]) -> bool:
    """Become a fresh unprivileged uid; where that uid could not reach the interpreter (a 0700
    home with no mount namespace to reopen it), stay uid 0 but give up every capability."""
    if os.geteuid() != 0:
        return False
    if not all(_reachable_by_others(path) for path in readable):
        _drop_capabilities()
        return False
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)  # all uids non-zero: the kernel clears every capability
    return os.geteuid() == uid and _capabilities_effective() == 0


def _reachable_by_others(path: str) -> bool:
    parent = os.path.dirname(path)
    while parent != "/":
        if not os.stat(parent).st_mode & 0o001:
            return False
        parent = os.path.dirname(parent)
    return True


def _drop_capabilities() -> None:
    for cap in range(64):
        libc().prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    header = struct.pack("<Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    libc().capset(ctypes.create_string_buffer(header, 8), ctypes.create_string_buffer(24))


def _capabilities_effective() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return -1


def _set_limits(spec: dict) -> None:
    import resource

    memory = spec["memory_mb"] << 20
    for limit, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_FSIZE, spec["file_mb"] << 20),
                         (resource.RLIMIT_NOFILE, spec["open_files"]), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NPROC, spec["processes"])):
        resource.setrlimit(limit, (value, value))


# Landlock (kernel ABI 1-6) through its three system calls.
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446
_LL_FILE_RIGHTS = 1 | 2 | 4 | (1 << 14) | (1 << 15)  # execute, write, read, truncate, ioctl_dev
_LL_READ = 4 | 8  # read_file, read_dir
_LL_WRITE_TREE = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8) | (1 << 14)  # write, remove, make dir/reg, truncate


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none."""
    version = libc().syscall(_LL_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(version, 0)


def _landlock(readable: list[str], writable: list[str]) -> bool:
    abi = landlock_abi()
    if abi < 1:
        return False
    fs = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)
    net = 3 if abi >= 4 else 0  # bind and connect TCP: handled with no rule, so refused
    scoped = 3 if abi >= 6 else 0  # abstract Unix sockets and signals stay inside the sandbox
    attr = struct.pack("<QQQ", fs, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc().syscall(_LL_CREATE, buf, len(attr), 0)
    if ruleset < 0:
        return False
    try:
        for paths, rights in ((readable, _LL_READ), (writable, _LL_READ | _LL_WRITE_TREE)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = rights & fs
                    if not os.path.isdir(path):
                        allowed &= _LL_FILE_RIGHTS
                    rule = ctypes.create_string_buffer(struct.pack("<Qi", allowed, fd), 12)
                    if libc().syscall(_LL_ADD_RULE, ruleset, 1, rule, 0) != 0:  # LANDLOCK_RULE_PATH_BENEATH
                        return False
                finally:
                    os.close(fd)
        return libc().syscall(_LL_RESTRICT, ruleset, 0) == 0
    finally:
        os.close(ruleset)


# seccomp: a classic BPF filter built here (libseccomp's Python bindings find the library by
# running ldconfig, which a confined child cannot do).
_AUDIT_ARCH_X86_64 = 0xC000003E
_X86_64_DENIED = {
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53, "accept4": 288,
    "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "ptrace": 101, "process_vm_readv": 310,
    "process_vm_writev": 311, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
    "chroot": 161, "tkill": 200, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 250, "add_key": 248, "request_key": 249,
    "kcmp": 312, "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "process_madvise": 440,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "kexec_load": 246,
    "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "reboot": 169,
    "swapon": 167, "swapoff": 168, "acct": 163, "syslog": 103, "quotactl": 179,
}
_CLONE, _CLONE3, _KILL, _TGKILL, _IOCTL = 56, 435, 62, 234, 16
_CLONE_THREAD, _TIOCSTI = 0x10000, 0x5412
_RET_ALLOW, _RET_KILL = 0x7FFF0000, 0x80000000


def _errno(code: int) -> int:
    return 0x00050000 | code


def _seccomp() -> bool:
    import errno
    import platform

    if platform.machine() != "x86_64":
        return False
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06

    def op(code, k, jt=0, jf=0):
        return struct.pack("<HBBI", code, jt, jf, k)

    def arg_check(nr, index, test, k):
        """nr with args[index] passing `test` against k: allowed, otherwise EPERM."""
        return [op(jeq, nr, 0, 4), op(ld, 16 + 8 * index), op(test, k, 0, 1), op(ret, _RET_ALLOW),
                op(ret, _errno(errno.EPERM))]

    me = os.getpid()
    prog = [op(ld, 4), op(jeq, _AUDIT_ARCH_X86_64, 1, 0), op(ret, _RET_KILL), op(ld, 0),
            op(jge, 0x40000000, 0, 1), op(ret, _errno(errno.EPERM))]  # x32 calls
    for nr in sorted(_X86_64_DENIED.values()):
        prog += [op(jeq, nr, 0, 1), op(ret, _errno(errno.EPERM))]
    prog += [op(jeq, _CLONE3, 0, 1), op(ret, _errno(errno.ENOSYS))]  # glibc falls back to clone
    prog += arg_check(_CLONE, 0, jset, _CLONE_THREAD)  # threads only
    prog += arg_check(_KILL, 0, jeq, me) + arg_check(_TGKILL, 0, jeq, me)  # signals to itself only
    prog += [op(jeq, _IOCTL, 0, 3), op(ld, 24), op(jeq, _TIOCSTI, 0, 1), op(ret, _errno(errno.EPERM))]
    prog += [op(ret, _RET_ALLOW)]
    code = b"".join(prog)
    filters = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Prog(len(prog), ctypes.cast(filters, ctypes.c_void_p))
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC): every thread of the process
    return libc().syscall(317, 1, 1, ctypes.byref(fprog)) == 0


def clear_scratch(folder: str | None, keep: frozenset[str] = frozenset()) -> None:
    """Empty a template's scratch folder between forks: nothing one untrusted run leaves is seen by
    the next. `keep` are the entries it held before any fork ran: where the checkout lies under
    /tmp, bubblewrap's folders for its read-only binds, which are not walked (0.65 s a fork)."""
    if not folder:
        return
    for name in set(os.listdir(folder)) - keep:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            for root, subdirs, _files in os.walk(path):  # a folder made unwritable is opened first
                for sub in [root] + [os.path.join(root, d) for d in subdirs]:
                    try:
                        os.chmod(sub, 0o700)
                    except OSError:
                        pass
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def _probe_child() -> None:
    """`python lockdown.py --probe`: lock down, then check that each layer bites."""
    import errno
    import socket

    applied = set(lock_down())
    found = {"identity": "identity" in applied and os.geteuid() != 0}
    try:
        os.listdir("/proc")
        found["landlock"] = False
    except PermissionError:
        found["landlock"] = "landlock" in applied
    try:
        socket.socket(socket.AF_UNIX).close()
        found["seccomp"] = False
    except OSError as error:
        found["seccomp"] = "seccomp" in applied and error.errno == errno.EPERM
    print(json.dumps(found))


if __name__ == "__main__" and sys.argv[1:] == ["--probe"]:
    _probe_child()
