"""Episode operations for the sandbox worker: many isolated in-memory databases in one process.

Loaded by verification/worker.py when the sandbox is started with extension="episodes_worker".
Each episode is its own SQLite connection made by deserializing a template, so creating or
resetting one copies bytes instead of rebuilding tables and rows. A call that changes the
database answers with the committed snapshot; the parent keeps the latest one per episode and
restores every episode of a worker it had to kill, so no episode loses committed state.

Operations (JSON frames; snapshots go out as raw bytes after the reply frame, the
`attachment`, and come in as base64 text, which happens only on the rare restore path):
  template      {key, state}                -> {state} + snapshot    build a template from rows
  put_template  {key, snapshot}             -> {}                    install a known template
  create        {episode_id, key, now, snapshot?}                    new episode (or restore one)
  call          {episode_id, tool, arguments, timeout} -> {result, error} (+ snapshot if it changed)
  reset         {episode_id}                                       back to the template
  dump          {episode_id}                -> {state}
  close         {episode_id}
"""

from __future__ import annotations

import base64
import sqlite3
from dataclasses import dataclass

from sqlmodel import Session


@dataclass
class _Episode:
    key: str
    conn: sqlite3.Connection
    session: Session
    engine: object


class Episodes:
    def __init__(self, worker) -> None:
        self.worker = worker
        self.templates: dict[str, bytes] = {}
        self.episodes: dict[str, _Episode] = {}

    def _episode(self, msg: dict) -> _Episode:
        episode = self.episodes.get(msg["episode_id"])
        if episode is None:
            raise KeyError(f"episode {msg['episode_id']!r} is not open in this worker")
        return episode

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
            self._dispose(old)
        data = base64.b64decode(msg["snapshot"]) if msg.get("snapshot") else self.templates[key]
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.deserialize(data)
        conn.execute("PRAGMA foreign_keys=ON")
        engine = self.worker._engine(conn)
        session = Session(engine)
        if msg.get("now"):
            session.info["now"] = msg["now"]
        self.episodes[msg["episode_id"]] = _Episode(key, conn, session, engine)
        return {"ok": True}

    def call(self, msg: dict) -> dict:
        episode = self._episode(msg)
        if msg["tool"] not in self.worker.tools:
            return {"ok": False, "error": f"tool {msg['tool']!r} is not defined"}
        before = episode.conn.total_changes
        result, error = self.worker.call(episode.session, episode.conn, msg["tool"], msg.get("arguments", {}),
                                         msg.get("timeout", 2.0))
        reply = {"ok": True, "result": result, "error": error}
        # total_changes also counts rolled-back rows, so only a success can carry a new snapshot
        if error is None and episode.conn.total_changes != before:
            reply["_attachment"] = episode.conn.serialize()
        return reply

    def reset(self, msg: dict) -> dict:
        episode = self._episode(msg)
        episode.session.close()
        episode.conn.deserialize(self.templates[episode.key])
        now = episode.session.info.get("now")
        episode.session = Session(episode.engine)  # a fresh identity map: no row survives a reset
        if now:
            episode.session.info["now"] = now
        return {"ok": True}

    def dump(self, msg: dict) -> dict:
        episode = self._episode(msg)
        try:
            return {"ok": True, "state": self.worker.db.dump_state(episode.session)}
        finally:
            episode.session.rollback()

    def close(self, msg: dict) -> dict:
        episode = self.episodes.pop(msg["episode_id"], None)
        if episode is not None:
            self._dispose(episode)
        return {"ok": True}

    @staticmethod
    def _dispose(episode: _Episode) -> None:
        episode.session.close()
        episode.engine.dispose()
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
