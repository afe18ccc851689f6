"""The files of a pool's episodes, all the parent's: the data folder, templates, one folder each.

    root/init.json          the DB layer's and the tools' sources, for the template process (0600)
    root/templates/tN.db    template databases, built by the template process (0700 folder)
    root/episodes/eN/       one episode's `db` (and `db-wal` once it wrote), its uid's alone (0700)

Episode uids may pass through the root and episodes/ to their own folder, never list them nor read
the template's files. Where the server runs as root, each episode folder is a tmpfs of its own
(`disk_mb`, a few files): one episode cannot fill the memory the others' files live in.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path

from sandbox import mounts


def _shm_root() -> str | None:
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


class EpisodeFiles:
    def __init__(self, db_source: str, tool_sources: dict[str, str], disk_mb: int, quota: bool, tell) -> None:
        self.disk_mb = disk_mb
        self.root = tempfile.mkdtemp(prefix="worldsmith-episodes-", dir=_shm_root())
        os.chmod(self.root, 0o711)
        os.makedirs(os.path.join(self.root, "templates"), mode=0o700)
        os.makedirs(os.path.join(self.root, "episodes"), mode=0o711)
        os.chmod(os.path.join(self.root, "episodes"), 0o711)
        self.quota = False
        if quota:
            if os.geteuid() == 0:
                try:
                    mounts.share(self.root)
                    self.quota = True
                except OSError as error:
                    tell("quota", f"episode directories share one file system without a size limit each ({error})")
            else:
                tell("quota", "episode directories share one file system without a size limit each (a tmpfs "
                     "per episode needs a server run as root)")
        self._cleanup = weakref.finalize(self, mounts.remove_root, self.root, self.quota)  # even without close()
        init = Path(self.root, "init.json")
        init.touch(mode=0o600)
        init.write_text(json.dumps({"db_source": db_source, "tools": tool_sources}))
        self.templates: dict[str, str] = {}
        self._counter = 0

    def new_folder(self) -> str:
        self._counter += 1
        return os.path.join(self.root, "episodes", f"e{self._counter}")

    def make_folder(self, path: str, uid: int | None) -> bool:
        """The episode's folder, its uid's alone; True when it is a tmpfs of its own."""
        os.mkdir(path, 0o700)
        mounted = False
        if self.quota:
            mounts.private_tmpfs(path, self.disk_mb, 16, uid)
            mounted = True
        if uid is not None:
            os.chown(path, uid, uid)
        return mounted

    def put_template(self, path: str, key: str, uid: int | None) -> None:
        """The episode's database back to its template (WAL dropped)."""
        for name in ("db-wal", "db-shm"):
            Path(path, name).unlink(missing_ok=True)
        db = os.path.join(path, "db")
        shutil.copyfile(self.templates[key], db)
        os.chmod(db, 0o600)
        if uid is not None:
            os.chown(db, uid, uid)

    def put_copy(self, path: str, source: str, uid: int | None) -> None:
        """Another episode folder's database and WAL, copied in: its committed state (a WAL frame
        left half-written by a killed process fails its checksum and is ignored on open)."""
        for name in ("db", "db-wal"):
            origin = os.path.join(source, name)
            if name == "db-wal" and not os.path.exists(origin):
                continue
            target = os.path.join(path, name)
            shutil.copyfile(origin, target)
            os.chmod(target, 0o600)
            if uid is not None:
                os.chown(target, uid, uid)

    def remove_folder(self, path: str, mounted: bool) -> None:
        if mounted:
            mounts.unmount(path)
        shutil.rmtree(path, ignore_errors=True)

    def template_rows(self) -> tuple[str, Path]:
        """A new template's name (relative to the root) and the file its rows go to."""
        name = f"templates/t{len(self.templates)}"
        return name, Path(self.root, name + ".json")

    def close(self) -> None:
        self._cleanup()
