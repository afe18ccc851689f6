# Every target sets up its own environment: a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
NAME   ?= job_seeking
# verify, tasks, eval and export take several domains too: NAME=a,b, a set (set_a, set_b) or all;
# pipeline.universe then runs each domain as a process of its own, JOBS at once, and keeps each result.
NAMES  ?= all
MODEL  ?=
TASK   ?=
# A model per role, each defaulting to MODEL: the steps of that role go to it (llm/roles.py ROLES).
export SCHEMA_MODEL CODE_MODEL TEST_MODEL TASK_MODEL ORACLE_MODEL AGENT_MODEL USER_MODEL
# Offline by default: nothing reaches for a model hub or litellm's price map.
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export TOKENIZERS_PARALLELISM := false

# The CPU torch wheel comes from pip's find-links directory when the machine has one,
# otherwise from the PyTorch CPU index; never the CUDA build from PyPI.
TORCH_SOURCE := $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS),--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)

.PHONY: env trainers-env confinement domain universe graph verify test test-fast lint bench serve eval clean-env

env: $(VENV)/.installed confinement

# Generated code runs inside bubblewrap's namespaces where it is installed (Landlock and
# seccomp apply either way); install it when this machine lets us, else say what is missing.
confinement:
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; } \
		|| echo "note: bubblewrap (bwrap) is not installed and could not be installed here; generated code runs under Landlock and seccomp without namespaces (see README, Confinement)" >&2

# Trainer libraries (verifiers, openenv-core, datasets, skyrl-gym) live in their own environment:
# they pin mcp and fastmcp versions the core does not use, and the core never imports them.
TRAINERS_VENV := .venv-trainers
trainers-env: $(TRAINERS_VENV)/.installed
$(TRAINERS_VENV)/.installed: requirements-trainers.lock requirements-tau2.lock $(VENV)/.installed
	$(PYTHON) -m venv $(TRAINERS_VENV)
	$(UV) pip install --python $(TRAINERS_VENV)/bin/python --compile-bytecode -r requirements-trainers.lock
	$(UV) pip install --python $(TRAINERS_VENV)/bin/python --compile-bytecode --no-deps -r requirements-tau2.lock
	touch $@

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet uv==0.9.0
	$(UV) pip install --python $(PY) --compile-bytecode $(TORCH_SOURCE) -r requirements.lock
	$(UV) pip install --python $(PY) --no-deps --compile-bytecode -e .
	touch $@

domain: env
	$(PY) -m pipeline "$(NAME)" $(if $(MODEL),--model $(MODEL))

# Many domains at once: NAMES (default all) rebuilt offline from their transcripts, or built with MODEL;
# JOBS at once (default half the cores); a summary of what passed and failed at the end. RAY=1: each
# domain a Ray task (an embedded local Ray, or the cluster RAY_ADDRESS names).
universe: env
	$(PY) -m pipeline.universe "$(NAMES)" $(if $(MODEL),--model $(MODEL)) $(if $(JOBS),--jobs $(JOBS)) $(if $(RAY),--ray)

graph: env
	$(PY) -m graph "$(NAME)" $(if $(MODEL),--model $(MODEL))

# The task stage alone: N task slots (default 48), FAMILIES task families of INSTANCES instances each
# (default none, 6), SEED (default 1); CALIBRATE=runs/<name>/<run>/report.json re-levels the tasks by
# an eval run's solve rates, KEEP_AT_MOST=0.25 drops those solved more often; see tasks/.
.PHONY: tasks
tasks: env
	$(PY) -m pipeline.universe "$(NAME)" --run tasks $(if $(MODEL),--model $(MODEL)) $(if $(JOBS),--jobs $(JOBS)) \
		-- $(if $(N),--n $(N)) $(if $(FAMILIES),--families $(FAMILIES)) $(if $(INSTANCES),--instances $(INSTANCES)) \
		$(if $(SEED),--seed $(SEED)) $(if $(CALIBRATE),--calibrate $(CALIBRATE)) \
		$(if $(KEEP_AT_MOST),--keep-at-most $(KEEP_AT_MOST))

verify: env
	$(PY) -m pipeline.universe "$(NAME)" --run verify $(if $(JOBS),--jobs $(JOBS))

# Every test, each under pytest-timeout's per-test limit (pyproject.toml).
test: env trainers-env
	$(PY) -m pytest -n 2

# The edit loop: every test but those marked slow (an embedding model, servers, a domain build)
# or integration (other processes, HTTP, the trainers' environment); `make test` runs them all.
test-fast: env
	$(PY) -m pytest -n 2 -m "not slow and not integration"

# ruff's checks and import order, configured in pyproject.toml.
lint: env
	$(VENV)/bin/ruff check .

bench: env
	$(PY) -m bench

serve: env
	@$(PY) -m mcp_servers "$(NAME)" $(if $(TASK),--task $(TASK))

# Agents scored on every task: built-in agents offline, or MODEL (and USER_MODEL for the simulated user).
K ?= 4
CONCURRENCY ?= 16
EVAL_ARGS = $(if $(USER_MODEL),--user-model $(USER_MODEL)) \
	$(if $(AGENT),--agent $(AGENT)) $(if $(VIA),--via $(VIA)) $(if $(RUN_ID),--run-id $(RUN_ID))
eval: env
	$(PY) -m pipeline.universe "$(NAME)" --run eval $(if $(MODEL),--model $(MODEL)) $(if $(JOBS),--jobs $(JOBS)) \
		-- -k $(K) --concurrency $(CONCURRENCY) $(strip $(EVAL_ARGS))

# Tasks in trainers' formats: FORMAT=hf|verl|skyrl|tau2|awm|all, into exports/<name>/<format>/ (or OUT/<format>/).
# Several domains make one dataset with a domain column; HOLDOUT=names|set: their tasks are the test split.
FORMAT ?= all
.PHONY: export
export: env trainers-env
	$(PY) -m export "$(NAME)" --format $(FORMAT) $(if $(HOLDOUT),--holdout $(HOLDOUT)) $(if $(OUT),--out $(OUT)) $(if $(BASE_URL),--base-url $(BASE_URL))

clean-env:
	rm -rf $(VENV)
