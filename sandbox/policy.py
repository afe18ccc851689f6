"""The one confinement policy: the rules every confined process obeys, and the named parameters
in which the three kinds of process differ.

`RULES` holds every rule set (system calls, Landlock rights, SQLite authorizer, import guard).
There is one of it: the procedural tests, the served episodes and the chain programs all take
it by reference (`policy.rules is RULES`), so no path can drift from another. A `Policy` adds
the parameters that really differ between them, each named and documented below; the three
profiles this project uses are `TOOL_TESTS`, `EPISODES` and `CHAIN_PROGRAMS`.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# x86_64 system calls no confined process makes: new processes (threads included) and programs,
# sockets, tracing and other processes' memory, namespaces and mounts, kernel keyrings, BPF,
# io_uring, modules, System V IPC and POSIX message queues (processes of one template share an
# IPC namespace), device nodes, execution domains, and the machine's own controls.
DENIED_SYSCALLS: dict[str, int] = {
    "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53, "accept4": 288,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "process_madvise": 440, "kcmp": 312,
    "process_mrelease": 448, "migrate_pages": 256, "move_pages": 279,
    "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "tkill": 200,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "keyctl": 250, "add_key": 248, "request_key": 249,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
    "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "syslog": 103, "quotactl": 179, "quotactl_fd": 443,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
    "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245, "mknod": 133, "mknodat": 259, "personality": 135,
}
# Signals: allowed only when the target (their first argument) is the caller's own process.
SELF_ONLY_SIGNALS: dict[str, int] = {"kill": 62, "tgkill": 234}
# ioctl requests refused on any descriptor: pushing input into a terminal.
DENIED_IOCTLS: dict[str, int] = {"TIOCSTI": 0x5412}

# Landlock filesystem rights (kernel ABI 1-6). Read: files and folders. Write: in the one folder
# a process may write (its scratch or its episode's own folder): create, change and remove regular
# files and folders; never device nodes, sockets, pipes, links, or a rename out of it.
LANDLOCK_READ = 4 | 8  # read_file, read_dir
LANDLOCK_WRITE = LANDLOCK_READ | 2 | 16 | 32 | 128 | 256 | (1 << 14)  # write, remove dir/file, make dir/reg, truncate

# SQLite. Always refused: reaching another database file (ATTACH, and VACUUM INTO, which attaches
# its target) and functions that load code or touch files. Refused while generated code runs when
# the runtime owns the transaction (`Policy.database == "persistent"`): PRAGMA and BEGIN/COMMIT.
SQLITE_ATTACH, SQLITE_DETACH, SQLITE_PRAGMA, SQLITE_TRANSACTION, SQLITE_FUNCTION = 24, 25, 19, 22, 31
SQLITE_DENIED_ACTIONS = frozenset({SQLITE_ATTACH, SQLITE_DETACH})
SQLITE_DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
SQLITE_RUNTIME_ACTIONS = frozenset({SQLITE_PRAGMA, SQLITE_TRANSACTION})

# Generated code: the modules it may import, and the names that let code out of its namespace.
ALLOWED_MODULES = frozenset({
    "db", "datetime", "re", "math", "json", "decimal", "typing", "collections", "itertools",
    "functools", "string", "sqlmodel", "sqlalchemy", "__future__", "enum", "dataclasses",
})
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "input",
    "breakpoint", "exit", "quit", "help", "memoryview", "getattr", "setattr", "delattr",
    "__builtins__", "__loader__", "__spec__",
})
# Modules that allowed modules' C code imports on first use, through the caller's `__import__`:
# `datetime`'s strftime, timetuple and today import `time`, its strptime `_strptime`. The run-time
# import guard lets exactly these through (source code still cannot name them: the static guard
# checks imports against ALLOWED_MODULES alone), and every template loads them, and what they
# import, before anything is confined (sandbox.generated.preload), so the standard library
# behaves inside as outside. Found by running ordinary snippets (tests/test_sandbox_stdlib.py)
# with an import hook: no other name reaches the guard.
LAZY_IMPORTS = frozenset({"time", "_strptime"})


@dataclass(frozen=True)
class Rules:
    """Every rule set, in one object that all paths share."""

    denied_syscalls: dict = field(default_factory=lambda: DENIED_SYSCALLS)
    self_only_signals: dict = field(default_factory=lambda: SELF_ONLY_SIGNALS)
    denied_ioctls: dict = field(default_factory=lambda: DENIED_IOCTLS)
    landlock_read: int = LANDLOCK_READ
    landlock_write: int = LANDLOCK_WRITE
    sqlite_denied_actions: frozenset = SQLITE_DENIED_ACTIONS
    sqlite_denied_functions: frozenset = SQLITE_DENIED_FUNCTIONS
    sqlite_runtime_actions: frozenset = SQLITE_RUNTIME_ACTIONS
    allowed_modules: frozenset = ALLOWED_MODULES
    lazy_imports: frozenset = LAZY_IMPORTS
    forbidden_names: frozenset = FORBIDDEN_NAMES

    __hash__ = object.__hash__


RULES = Rules()

# Layer names a Policy may leave off (`off`), for tests that show what each layer alone stops.
LAYERS = ("namespaces", "identity", "quota", "dumpable", "landlock", "seccomp", "authorizer")


def system_readable() -> list[str]:
    """What any Python process reads besides its prefixes: shared libraries and time zones."""
    return ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo"]


@dataclass(frozen=True)
class Policy:
    """The one policy with the parameters a kind of process needs; every rule comes from `rules`.

    database      "scratch": an in-memory copy per test, thrown away with the process (procedural
                  tests); "persistent": the episode's own file, kept across calls and processes,
                  in transactions the runtime owns, so PRAGMA and BEGIN/COMMIT are refused while
                  generated code runs; "none": the process holds no database at all and its only
                  capability is `call(tool, **arguments)` answered by the parent (chain programs).
    uid_per_child a distinct uid for each forked process, chosen by the parent (episodes, which live
                  side by side), instead of one fresh uid for the whole tree (processes that run
                  one at a time and leave nothing behind).
    memory_mb, file_mb, open_files, processes
                  rlimits of each process: address space, file size, descriptors, tasks of its uid.
    packages      folders of this project (beside `sandbox/`) the template imports its service
                  from; readable, like the interpreter's prefixes and system libraries.
    off           layers left off (names in LAYERS); only tests set it, to show that an attack
                  succeeds without the layer that stops it. A warning is printed when set.
    """

    database: Literal["scratch", "persistent", "none"]
    uid_per_child: bool
    memory_mb: int
    file_mb: int
    open_files: int
    processes: int
    packages: tuple[str, ...] = ()
    off: frozenset[str] = frozenset()
    rules: Rules = RULES

    def __post_init__(self) -> None:
        unknown = set(self.off) - set(LAYERS)
        if unknown:
            raise ValueError(f"unknown confinement layers: {', '.join(sorted(unknown))}")

    @property
    def runtime_owns_transactions(self) -> bool:
        return self.database == "persistent"

    def readable(self) -> list[str]:
        """What a confined process may read: the interpreter, this package and the service's, libraries."""
        roots = [sys.base_prefix, sys.prefix, HERE, *(os.path.join(ROOT, p) for p in self.packages)]
        return sorted({os.path.realpath(p) for p in roots} | set(system_readable()))

    def spec(self) -> dict:
        """The parameters as JSON for the confined process; the rules are never sent, it has its own."""
        out = asdict(self)
        del out["rules"]
        out["off"] = sorted(self.off)
        out["packages"] = list(self.packages)
        return out

    @classmethod
    def from_spec(cls, spec: dict) -> Policy:
        fields = {k: spec[k] for k in ("database", "uid_per_child", "memory_mb", "file_mb", "open_files",
                                       "processes")}
        return cls(**fields, packages=tuple(spec.get("packages", ())), off=frozenset(spec.get("off", ())))

    def without(self, *layers: str) -> Policy:
        """This policy with `layers` left off (tests only)."""
        return replace(self, off=self.off | frozenset(layers))

    def dumps(self) -> str:
        return json.dumps(self.spec(), sort_keys=True)


TOOL_TESTS = Policy(database="scratch", uid_per_child=False, memory_mb=1536, file_mb=8, open_files=256,
                    processes=16, packages=("verification",))
EPISODES = Policy(database="persistent", uid_per_child=True, memory_mb=1024, file_mb=256, open_files=64,
                  processes=16, packages=("mcp_servers",))
CHAIN_PROGRAMS = Policy(database="none", uid_per_child=False, memory_mb=512, file_mb=1, open_files=256,
                        processes=4, packages=("tasks",))
