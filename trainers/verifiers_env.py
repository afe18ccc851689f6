"""A verifiers (v1) taskset and environment over a served worldsmith domain.

    import trainers.verifiers_env as ws
    env = ws.load_environment(domain="job_seeking", split="train",
                              openenv_url="http://127.0.0.1:8001", worldsmith_url="http://127.0.0.1:8000")

Importing the module registers it as verifiers' taskset `worldsmith` (verifiers resolves a
taskset id to a module under `verifiers.v1.tasksets`). Each task is one
worldsmith task played through the OpenEnv adapter (`trainers.openenv_server`) by verifiers'
own OpenEnv loop (`verifiers.v1.tasksets.openenv.OpenEnvEnv`): the rollout's WebSocket
connection is its episode, so the episode id lives in the rollout and never in the model's
context; the model acts with `call_tool` actions, ends with `end_episode`, and the rollout's
reward (`openenv_reward`) is the episode's state-diff reward, which arrives only then.

The simulated user is reached the same way: the model's `message_user` calls go to it through
the adapter, and its reply is the next observation (trainers/conversation.py). Multi-turn is the
default; `single_turn=True` leaves out the tasks marked conversational (run the adapter with
--single-turn as well, so that the model is offered no user to talk to).

Splits: `all`, or `train` and `test`, a fixed 80/20 partition by a hash of the task id (the
same on every machine, and a task keeps its split when others are added).

Several domains: `load_environment(domains=["job_seeking", "pet_care"], ...)` in front of a
server that serves them all (`python -m mcp_servers job_seeking,pet_care --transport http`);
each task is named `<domain>/<task id>` and its reset names its domain. With `holdout=[...]` the
split is by domain: `test` is the held-out domains' tasks, `train` every other domain's;
without it, by a hash of `<domain>/<task id>`.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator

import verifiers.v1 as vf
from openenv import GenericEnvClient
from verifiers.v1.tasksets.openenv import OpenEnvData, OpenEnvEnv, OpenEnvEnvConfig, OpenEnvTask

from trainers.conversation import connected, playable

SPLITS = ("all", "train", "test")
TASKSET_ID = "worldsmith"


def split_of(task_id: str) -> str:
    return "test" if int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % 5 == 0 else "train"


class WorldsmithConfig(vf.TasksetConfig):
    domain: str = "job_seeking"
    split: str = "all"
    openenv_url: str = "http://127.0.0.1:8001"
    """The OpenEnv adapter in front of the worldsmith server (python -m trainers.openenv_server)."""
    worldsmith_url: str = "http://127.0.0.1:8000"
    """The worldsmith server itself, asked for the task list."""
    single_turn: bool = False
    """Leave out the tasks that need the user's answers."""
    domains: list[str] = []
    """Several domains of one server; empty: the server's only domain, named `domain`."""
    holdout: list[str] = []
    """With `domains`: the domains whose tasks are the test split."""


class WorldsmithTaskset(vf.Taskset[OpenEnvTask, WorldsmithConfig]):
    def load(self) -> Iterator[OpenEnvTask]:
        config = self.config
        if config.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {config.split!r}")
        unknown = set(config.holdout) - set(config.domains)
        if unknown:
            raise ValueError(f"holdout names domains not among domains={config.domains}: {sorted(unknown)}")
        with connected(config.worldsmith_url) as control:
            if not config.domains:  # one domain: its plain task ids, as before
                chosen = [(config.domain, None, t) for t in playable(control, config.single_turn)]
            else:
                chosen = [(d, d, t) for d in config.domains for t in playable(control, config.single_turn, d)]
        for domain, named, task_id in chosen:
            key = task_id if named is None else f"{domain}/{task_id}"
            side = ("test" if domain in config.holdout else "train") if config.holdout else split_of(key)
            if config.split in ("all", side):
                reset = {"task_id": task_id} if named is None else {"task_id": task_id, "domain": named}
                yield OpenEnvTask(OpenEnvData(id=key, name=f"{domain}/{task_id}", prompt=None, env=None,
                                              base_url=config.openenv_url, use_docker=False, provider_kwargs={},
                                              reset=reset), config.task)


if not hasattr(GenericEnvClient, "_base_url"):
    # verifiers 0.4.0's OpenEnv loop reads the client's `_base_url`; openenv-core 0.3.0's client
    # keeps only `_ws_url` (the base URL as ws:// plus "/ws"), so the loop fails without this.
    GenericEnvClient._base_url = property(lambda self: self._ws_url.removesuffix("/ws"))


class WorldsmithEnv(OpenEnvEnv):
    """verifiers' OpenEnv loop, unchanged: the engine steps the adapter host-side."""


def load_environment(domain: str = "job_seeking", split: str = "all", openenv_url: str = "http://127.0.0.1:8001",
                     worldsmith_url: str = "http://127.0.0.1:8000", single_turn: bool = False,
                     domains: list[str] | None = None, holdout: list[str] | None = None, **env_config) -> vf.Env:
    taskset = WorldsmithConfig(id=TASKSET_ID, domain=domain, split=split, openenv_url=openenv_url,
                               worldsmith_url=worldsmith_url, single_turn=single_turn, domains=list(domains or []),
                               holdout=list(holdout or []))
    return WorldsmithEnv(OpenEnvEnvConfig(taskset=taskset, **env_config))


__all__ = ["WorldsmithConfig", "WorldsmithEnv", "WorldsmithTaskset", "load_environment"]
sys.modules.setdefault(f"verifiers.v1.tasksets.{TASKSET_ID}", sys.modules[__name__])
