"""Episode operations for the sandbox worker: many isolated in-memory databases in one process.

Loaded by verification/worker.py when the sandbox is started with extension="episodes_worker".
Each episode is its own SQLite connection made by deserializing a template, so creating or
resetting one copies bytes instead of rebuilding tables and rows. A call that changes the
database answers with the committed snapshot; the parent keeps the latest one per episode and
restores every episode of a worker it had to kill, so no episode loses committed state.

Operations, sent as ep_<name> in JSON frames. Snapshots go out as raw bytes after the reply
frame (its `attachment`) and come in as base64 text, which only the rare restore path does:
  template      {key, state}                            -> {state} + snapshot   a template from rows
  put_template  {key, snapshot}                                                 install a known template
  create        {episode_id, key, now, snapshot?}                               new (or restored) episode
  call          {episode_id, tool, arguments, timeout}  -> {result, error} (+ snapshot when it changed)
  reset         {episode_id}                                                    back to the template
  dump          {episode_id}                            -> {state}
  close         {episode_id}
"""

from __future__ import annotations

import base64
import sqlite3
from dataclasses import dataclass

from sqlalchemy import create_engine
from sqlalchemy.pool import Pool
from sqlmodel import Session


class _EpisodePool(Pool):
    """StaticPool for many databases: the connection handed out is the current episode's.

    One engine serves every episode of the worker; a per-episode engine would keep its own
    statement cache, and hundreds of those make every call slower. Requests are served one at a
    time, so `current` is the episode of the request being served.
    """

    def __init__(self) -> None:
        super().__init__(lambda: self.current)
        self.current: sqlite3.Connection | None = None
        self._records: dict[sqlite3.Connection, object] = {}

    def status(self) -> str:
        return "EpisodePool"

    def _do_get(self):
        record = self._records.get(self.current)
        if record is None:  # first use: runs the connect events (foreign keys on) once
            record = self._records[self.current] = self._create_connection()
        return record

    def _do_return_conn(self, record) -> None:
        pass

    def forget(self, conn: sqlite3.Connection) -> None:
        self._records.pop(conn, None)

    def dispose(self) -> None:
        self._records.clear()

    def recreate(self) -> _EpisodePool:
        return self


@dataclass
class _Episode:
    key: str
    conn: sqlite3.Connection
    now: str | None


class Episodes:
    def __init__(self, worker) -> None:
        self.worker = worker
        self.templates: dict[str, bytes] = {}
        self.episodes: dict[str, _Episode] = {}
        self.pool = _EpisodePool()
        self.engine = create_engine("sqlite://", pool=self.pool)

    def _episode(self, msg: dict) -> _Episode:
        episode = self.episodes.get(msg["episode_id"])
        if episode is None:
            raise KeyError(f"episode {msg['episode_id']!r} is not open in this worker")
        return episode

    def _session(self, episode: _Episode) -> Session:
        """A session on the episode's database (requests are served one at a time)."""
        self.pool.current = episode.conn
        session = Session(self.engine)
        if episode.now:
            session.info["now"] = episode.now
        return session

    # -- templates -----------------------------------------------------------------------
    def template(self, msg: dict) -> dict:
        session, conn = self.worker.fresh_session(None)
        try:
            self.worker.db.load_state(session, msg["state"])
            session.commit()
            state = self.worker.db.dump_state(session)
            session.rollback()  # end the read transaction before serializing
        except Exception as error:
            session.rollback()
            first_line = (str(error).splitlines() or [""])[0][:500]
            return {"ok": False, "error": f"the state does not load: {type(error).__name__}: {first_line}"}
        finally:
            session.close()
        data = conn.serialize()
        conn.close()
        self.templates[msg["key"]] = data
        return {"ok": True, "state": state, "_attachment": data}

    def put_template(self, msg: dict) -> dict:
        self.templates[msg["key"]] = base64.b64decode(msg["snapshot"])
        return {"ok": True}

    # -- episodes ------------------------------------------------------------------------
    def create(self, msg: dict) -> dict:
        key = msg["key"]
        if key not in self.templates:
            return {"ok": False, "error": f"unknown template {key!r}"}
        old = self.episodes.pop(msg["episode_id"], None)
        if old is not None:
            self._discard(old)
        data = base64.b64decode(msg["snapshot"]) if msg.get("snapshot") else self.templates[key]
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.deserialize(data)
        conn.execute("PRAGMA foreign_keys=ON")
        self.episodes[msg["episode_id"]] = _Episode(key, conn, msg.get("now"))
        return {"ok": True}

    def call(self, msg: dict) -> dict:
        episode = self._episode(msg)
        if msg["tool"] not in self.worker.tools:
            return {"ok": False, "error": f"tool {msg['tool']!r} is not defined"}
        before = episode.conn.total_changes
        session = self._session(episode)
        try:
            result, error = self.worker.call(session, episode.conn, msg["tool"], msg.get("arguments", {}),
                                             msg.get("timeout", 2.0))
        finally:
            session.close()
        reply = {"ok": True, "result": result, "error": error}
        # total_changes also counts rolled-back rows, so only a success can carry a new snapshot
        if error is None and episode.conn.total_changes != before:
            reply["_attachment"] = episode.conn.serialize()
        return reply

    def reset(self, msg: dict) -> dict:
        episode = self._episode(msg)
        episode.conn.deserialize(self.templates[episode.key])
        return {"ok": True}

    def dump(self, msg: dict) -> dict:
        session = self._session(self._episode(msg))
        try:
            return {"ok": True, "state": self.worker.db.dump_state(session)}
        finally:
            session.close()

    def close(self, msg: dict) -> dict:
        episode = self.episodes.pop(msg["episode_id"], None)
        if episode is not None:
            self._discard(episode)
        return {"ok": True}

    def _discard(self, episode: _Episode) -> None:
        self.pool.forget(episode.conn)
        episode.conn.close()


def handlers(worker) -> dict:
    episodes = Episodes(worker)
    return {
        "ep_template": episodes.template,
        "ep_put_template": episodes.put_template,
        "ep_create": episodes.create,
        "ep_call": episodes.call,
        "ep_reset": episodes.reset,
        "ep_dump": episodes.dump,
        "ep_close": episodes.close,
    }
