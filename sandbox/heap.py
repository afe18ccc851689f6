"""A template's C heap made fork-friendly: every free chunk taken before the forks start.

A fork shares the template's pages until it writes one. Its first C allocations (SQLite opening a
database, parsing a schema, the sqlite3 module's statements) were served from the template's free
chunks, scattered over its heap: each one cost the fork a copy of the page it lay in, and of the
pages of its neighbours in malloc's free lists (about 1.5 MiB and a millisecond or more for each
episode process). With those chunks taken here, once, a fork's allocations come from the top of
the heap: fresh pages, as many as it fills. What is taken stays allocated, shared by every fork,
untouched; it costs the template its size (a few hundred KiB), once.
"""

from __future__ import annotations

import ctypes
import ctypes.util


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


_SIZES = (1 << 16, 1 << 14, 1 << 12, 1 << 10, 256, 64, 24)  # largest first: big holes go whole
_LIMIT = 64 << 20  # never take more than this, whatever malloc reports
_taken: list[int] = []


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):  # not glibc (or older than 2.33): nothing to settle
        return None
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


_LIBC = _libc()


def settle() -> int:
    """Take every free chunk of the C heap but its top; returns the bytes taken (0 without glibc)."""
    libc = _LIBC
    if libc is None:
        return 0
    libc.malloc_trim(0)  # fast bins merged into the free lists, whole free pages handed back
    taken = 0
    for size in _SIZES:
        while taken < _LIMIT:
            info = libc.mallinfo2()
            if info.fordblks - info.keepcost < size:  # what is free besides the top
                break
            chunk = libc.malloc(size)
            if not chunk:
                return taken
            if libc.mallinfo2().keepcost != info.keepcost:  # carved from the top: no hole this size is left
                libc.free(chunk)
                break
            _taken.append(chunk)
            taken += size
    return taken
