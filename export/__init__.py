"""Export a built domain's tasks in the formats trainers and peer benchmarks read.

source.py        the domain as exports see it: verified tools, policy, tasks, the agent's prompt
files.py         JSON, JSONL and parquet writers (parquet through pyarrow, here or in .venv-trainers)
hf.py            a Hugging Face `datasets` dataset (JSONL + parquet, with a dataset card)
episode_rows.py  rows bound to served episodes, the builder verl and SkyRL rows share
verl.py          verl multi-turn agent-loop rows
skyrl.py         SkyRL rows {data_source, prompt, env_class, reward_spec, extra_info}
tau2.py          a tau2-bench domain folder (tasks.json, policy.md, db.json)
awm.py           Agent World Model JSONL files (scenario, tasks, DDL, sample rows, verifiers)
awm_verifier.py  the verifier code an AWM entry carries (self-contained: sqlite3, json, re)
awm_answer.py    what an answer task's AWM verifier adds: its facts in the final answer
__main__.py      python -m export NAME --format hf|verl|skyrl|tau2|awm|all [--out DIR] [--base-url URL]

Nothing an agent is shown (prompts, tool schemas, tool and interaction arguments) carries a
task's answer: reference solutions and expected states go only into the reward fields.
"""

FORMATS = ("hf", "verl", "skyrl", "tau2", "awm")
