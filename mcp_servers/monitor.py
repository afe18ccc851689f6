"""The episode pool's monitor: replaces, at once, episode processes that died while idle, and the
template process when it died (its episodes died with it and are replaced in turn). A process
that dies during a call is replaced by that call's caller."""

from __future__ import annotations

import threading
import time

from sandbox.forkserver import alive


class Monitor:
    def __init__(self, pool) -> None:
        self.pool = pool
        self.thread = threading.Thread(target=self._watch, name="worldsmith-episode-monitor", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        pool = self.pool
        while not pool.closing:
            if not pool.template_alive():
                pool.revive_template()
            busy = False
            for fd, _events in pool.epoll.poll(0.2):
                proc = pool.watched(fd)
                if proc is None or not proc.lock.acquire(blocking=False):
                    busy = True
                    continue
                try:
                    if not proc.closed and proc.pidfd == fd and not alive(fd):
                        pool.restore(proc)
                except Exception:  # noqa: BLE001 (the next call on it tries again and reports)
                    pass
                finally:
                    proc.lock.release()
            if busy:  # a death its caller is handling stays readable until then
                time.sleep(0.01)

    def join(self, timeout: float) -> None:
        self.thread.join(timeout=timeout)
