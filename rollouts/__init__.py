"""Rollouts: an agent and a simulated user in a domain's episodes, scored, and pass^k over tasks.

    episode.py     one episode (run_task, oracle_best_of_k)   agents.py   LLM and scripted agents
    user.py        simulated users                            sessions.py in-process or HTTP MCP episodes
    trajectory.py  what an episode produces, its limits       passk.py    pass^k and pass@k
    user_api.py    the simulated user over HTTP, for trainers serve.py    the server with it (python -m rollouts.serve)
"""

from rollouts.agents import AgentView, ForbiddenAgent, LLMAgent, NoopAgent, ReferenceAgent
from rollouts.episode import BestOfK, aoracle_best_of_k, arun_task, oracle_best_of_k, run_episode, run_task
from rollouts.trajectory import STOP, AgentAction, Limits, ToolCall, Trajectory
from rollouts.user import InstructionUser, LLMUser

__all__ = ["STOP", "AgentAction", "AgentView", "BestOfK", "ForbiddenAgent", "InstructionUser", "LLMAgent", "LLMUser", "Limits",
           "NoopAgent", "ReferenceAgent", "ToolCall", "Trajectory", "aoracle_best_of_k", "arun_task",
           "oracle_best_of_k", "run_episode", "run_task"]
