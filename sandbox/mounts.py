"""Mounts a parent makes for its confined processes: a tmpfs of its own for each one's folder.

Made on the host, below a shared bind of the parent's data folder, so that they reach the mount
namespace of a template started afterwards. Needs root; callers fall back to one shared file
system (and say so) where it fails.
"""

from __future__ import annotations

import ctypes
import os
import shutil

_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_SHARED, _MNT_DETACH = 2, 4, 8, 4096, 1 << 20, 2


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                  data.encode() if data else None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def unmount(target: str) -> None:
    ctypes.CDLL(None).umount2(target.encode(), _MNT_DETACH)


def share(root: str) -> None:
    """Bind `root` onto itself as a shared mount: mounts below it propagate into later namespaces."""
    mount(root, root, None, _MS_BIND)
    try:
        mount("none", root, None, _MS_SHARED)
    except OSError:
        unmount(root)
        raise


def private_tmpfs(target: str, size_mb: int, inodes: int, uid: int | None) -> None:
    """A size-limited tmpfs (no devices, no set-uid, nothing executable) on `target`, 0700, its uid's."""
    owner = f",uid={uid},gid={uid}" if uid is not None else ""
    mount("worldsmith-episode", target, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
          f"size={size_mb}m,nr_inodes={inodes},mode=0700{owner}")


def remove_root(root: str, mounted: bool) -> None:
    if mounted:  # the root's bind and every tmpfs below it, at once
        unmount(root)
    shutil.rmtree(root, ignore_errors=True)
