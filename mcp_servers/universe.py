"""Several domains served at once, in process: one Environment, with its own pool of episode
processes, per domain, and episode ids unique across them.

    from mcp_servers.universe import Universe

    with Universe(["job_seeking", "pet_care"]) as universe:        # or Universe("all"), Universe("set_b")
        episode = universe.create_episode("task_001", domain="pet_care")
        print(episode.call("some_tool", {...}).ok, episode.reward()["reward"])

Every episode is confined as a single domain's is (mcp_servers.runtime): a process forked from
its own domain's template. `domain` may be left out when one domain is served; an unknown one
raises UnknownDomain naming the served ones.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from domains import registry
from domains.registry import UnknownDomain
from domains.task_model import Task
from mcp_servers.runtime import Environment, Episode, EpisodeError

__all__ = ["Universe", "UnknownDomain"]


class Universe:
    """The served domains, by name. `domains`: a user's list (`all`, a set, names, paths), or
    environments already made (a Mapping of name to Environment); `options` go to each
    Environment. Thread-safe."""

    def __init__(self, domains: str | Iterable[str | Path] | Mapping[str, Environment], **options):
        self.environments: dict[str, Environment] = {}
        if isinstance(domains, Mapping):
            self.environments.update(domains)
        else:
            given = [domains] if isinstance(domains, (str, Path)) else list(domains)
            try:
                for item in given:
                    paths = [item] if Path(item, "spec.json").is_file() else registry.expand(str(item))
                    for domain in paths:
                        env = Environment(domain, **options)
                        if env.name in self.environments:
                            env.close()
                            continue
                        self.environments[env.name] = env
            except BaseException:
                self.close()
                raise
        if not self.environments:
            raise UnknownDomain(f"no domain to serve; {registry.described()}")
        self._lock = threading.Lock()
        self._opening: set[str] = set()  # episode ids being created, so no other domain takes them meanwhile

    @property
    def names(self) -> list[str]:
        return list(self.environments)

    @property
    def name(self) -> str:
        """The served domain's name, or the names joined by commas."""
        return ",".join(self.environments)

    def environment(self, domain: str | None = None) -> Environment:
        """The named domain's environment; with none named, the only one served."""
        if domain is None:
            if len(self.environments) == 1:
                return next(iter(self.environments.values()))
            raise UnknownDomain(f"several domains are served ({', '.join(self.environments)}): name one")
        env = self.environments.get(domain)
        if env is None:
            raise UnknownDomain(f"domain {domain!r} is not served here; the served domains are: "
                                f"{', '.join(self.environments)}")
        return env

    # -- tasks ----------------------------------------------------------------------------
    def task_ids(self, domain: str | None = None) -> list[str]:
        return self.environment(domain).task_ids()

    def task(self, task_id: str, domain: str | None = None) -> Task:
        return self.environment(domain).task(task_id)

    # -- episodes -----------------------------------------------------------------------
    def create_episode(self, task_id: str | None = None, episode_id: str | None = None, *,
                       domain: str | None = None, **options) -> Episode:
        """A new episode of `domain`'s task (see Environment.create_episode); its id is unique
        across every served domain."""
        env = self.environment(domain)
        episode_id = episode_id or secrets.token_hex(8)
        with self._lock:
            if episode_id in self._opening or any(self._holds(e, episode_id) for e in self.environments.values()):
                raise EpisodeError(f"episode {episode_id!r} already exists")
            self._opening.add(episode_id)
        try:
            return env.create_episode(task_id, episode_id, **options)
        finally:
            with self._lock:
                self._opening.discard(episode_id)

    @staticmethod
    def _holds(env: Environment, episode_id: str) -> bool:
        try:
            env.get_episode(episode_id)
        except EpisodeError:
            return False
        return True

    def get_episode(self, episode_id: str) -> Episode:
        for env in self.environments.values():
            if self._holds(env, episode_id):
                return env.get_episode(episode_id)
        raise EpisodeError(f"episode {episode_id!r} does not exist or was closed")

    def episodes(self) -> list[Episode]:
        return [e for env in self.environments.values() for e in env.episodes()]

    # -- serving ------------------------------------------------------------------------
    def health(self) -> dict:
        """ok is false while any domain's episode process is being replaced or a template is down."""
        merged: dict = {}
        for health in (env.health() for env in self.environments.values()):
            for key, value in health.items():  # flags hold for all, counts add up (actors, restarts, ...)
                if isinstance(value, bool):
                    merged[key] = merged.get(key, True) and value
                elif isinstance(value, int):
                    merged[key] = merged.get(key, 0) + value
                else:
                    merged.setdefault(key, value)
        return merged

    def close(self) -> None:
        for env in self.environments.values():
            env.close()

    def __enter__(self) -> Universe:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
