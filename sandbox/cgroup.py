"""Memory and process limits over a whole confined tree, in cgroup v2 or v1, where writable."""

from __future__ import annotations

import os
import secrets
import signal
import time


class Cgroup:
    """Memory and process limits over one confined tree, in cgroup v2 or v1, where writable."""

    ROOT = "/sys/fs/cgroup"

    def __init__(self, dirs: list[str]) -> None:
        self.dirs = dirs

    @classmethod
    def create(cls, memory_mb: int, processes: int) -> Cgroup | None:
        name = f"worldsmith-{os.getpid()}-{secrets.token_hex(4)}"
        settings = cls._v2(name, memory_mb, processes) or cls._v1(name, memory_mb, processes)
        if not settings:
            return None
        dirs = []
        try:
            for path, values in settings:
                os.makedirs(path)
                dirs.append(path)
                for file, value in values.items():
                    if os.path.exists(os.path.join(path, file)):
                        with open(os.path.join(path, file), "w") as f:
                            f.write(str(value))
        except OSError:
            cls(dirs).remove()
            return None
        return cls(dirs)

    @classmethod
    def _v2(cls, name: str, memory_mb: int, processes: int):
        try:
            with open(os.path.join(cls.ROOT, "cgroup.controllers")) as f:
                controllers = f.read().split()
        except OSError:
            return None
        if not {"memory", "pids"} <= set(controllers) or not os.access(cls.ROOT, os.W_OK):
            return None
        base = os.path.join(cls.ROOT, "worldsmith")
        try:
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(cls.ROOT, "cgroup.subtree_control"), "w") as f:
                f.write("+memory +pids")
            with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                f.write("+memory +pids")
        except OSError:
            return None
        return [(os.path.join(base, name), {"memory.max": memory_mb << 20, "memory.swap.max": 0,
                                            "pids.max": processes})]

    @classmethod
    def _v1(cls, name: str, memory_mb: int, processes: int):
        memory, pids = os.path.join(cls.ROOT, "memory"), os.path.join(cls.ROOT, "pids")
        if not (os.access(memory, os.W_OK) and os.access(pids, os.W_OK)):
            return None
        return [(os.path.join(memory, "worldsmith", name),
                 {"memory.limit_in_bytes": memory_mb << 20, "memory.memsw.limit_in_bytes": memory_mb << 20}),
                (os.path.join(pids, "worldsmith", name), {"pids.max": processes})]

    def enter(self) -> None:
        """Move the calling (just forked) process in; its descendants follow."""
        for path in self.dirs:
            fd = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)

    def remove(self) -> None:
        for path in self.dirs:
            for _ in range(100):
                try:
                    with open(os.path.join(path, "cgroup.procs")) as f:
                        pids = [int(p) for p in f.read().split()]
                except OSError:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                try:
                    os.rmdir(path)
                    break
                except OSError:
                    time.sleep(0.01)


