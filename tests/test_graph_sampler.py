"""Topology-aware sampling: the guarantee over many seeds and random graphs, and the validator."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graph import model
from graph.sampler import bindings, sample_chain, sampleable, validate_chain
from tests.support.tool_graph import JOBS, make_graph


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), max_len=st.integers(1, 10), branching=st.integers(1, 4))
def test_sampled_chains_always_validate(seed, max_len, branching):
    chain = sample_chain(JOBS, seed, max_len, branching)
    assert chain and len(chain) <= max_len and len(set(chain)) == len(chain)
    assert validate_chain(JOBS, chain) == []
    assert sample_chain(JOBS, seed, max_len, branching) == chain  # reproducible


@st.composite
def random_graphs(draw):
    """Random domains: tools with internal/external, required/optional inputs and random flows."""
    n = draw(st.integers(1, 9))
    names = [f"t{i}" for i in range(n)]
    tools, outputs = {}, []
    for name in names:
        params = [(f"p{j}", draw(st.booleans()), draw(st.sampled_from(["internal", "external"])))
                  for j in range(draw(st.integers(0, 3)))]
        outs = [f"o{j}" for j in range(draw(st.integers(0, 2)))]
        tools[name] = (params, outs)
        outputs += [(name, o) for o in outs]
    inputs = [(name, p) for name, (params, _) in tools.items() for p, _, _ in params]
    pairs = [(a, o, b, p) for a, o in outputs for b, p in inputs if a != b]
    flows = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=12)) if pairs else []
    relations = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names))
                              .filter(lambda r: r[0] != r[1]), unique=True, max_size=4)) if n > 1 else []
    return make_graph(tools, flows, relations)


@settings(max_examples=300, deadline=None)
@given(g=random_graphs(), seed=st.integers(0, 2**32 - 1), max_len=st.integers(1, 8), branching=st.integers(1, 3))
def test_guarantee_holds_on_random_graphs(g, seed, max_len, branching):
    chain = sample_chain(g, seed, max_len, branching)
    assert len(chain) <= max_len and len(set(chain)) == len(chain)
    if chain:
        assert validate_chain(g, chain) == []
        assert set(chain) <= sampleable(g)
    free = [t for t in model.tools(g) if not any(g.nodes[p]["required"] and g.nodes[p]["role"] == "internal"
                                               for p in model.inputs_of(g, t))]
    if free:
        assert chain, "a tool without prerequisites always yields a chain"


def test_prerequisites_are_resolved_recursively_and_chains_branch():
    seen_deep, seen_branch = False, False
    for seed in range(300):
        chain = sample_chain(JOBS, seed, max_len=8, branching=3)
        steps = bindings(JOBS, chain)
        if "schedule_interview" in chain and chain.index("schedule_interview") >= 3:
            seen_deep = True
        fed: dict[str, set[int]] = {}
        for i, found in enumerate(steps):
            for how in found.values():
                if how.startswith("step"):
                    fed.setdefault(how.split(":")[0], set()).add(i)
        if any(len(later) > 1 for later in fed.values()):  # one step feeds several: a tree, not a path
            seen_branch = True
    assert seen_deep and seen_branch


def test_validator_rejects_unsatisfiable_inputs():
    assert validate_chain(JOBS, ["search_jobs", "get_job", "get_company"]) == []
    problems = validate_chain(JOBS, ["submit_application"])
    assert problems == [
        "step 1: submit_application needs internal parameter 'job_id', which no earlier step produces "
        "(produced by: get_job, search_jobs)",
        "step 1: submit_application needs internal parameter 'resume_id', which no earlier step produces "
        "(produced by: list_resumes, upload_resume)",
    ]
    # Order matters: the producer must come first.
    assert len(validate_chain(JOBS, ["withdraw_application", "list_applications"])) == 1
    assert validate_chain(JOBS, ["list_applications", "withdraw_application"]) == []
    assert validate_chain(JOBS, ["search_jobs", "apply_now"]) == ["step 2: 'apply_now' is not a tool of this domain"]
    assert validate_chain(JOBS, ["get_job:in:job_id"]) == ["step 1: 'get_job:in:job_id' is not a tool of this domain"]
    assert validate_chain(JOBS, []) == ["the chain is empty"]


def test_bindings_explain_each_parameter():
    chain = ["list_applications", "get_job", "upload_resume", "submit_application"]
    assert bindings(JOBS, chain) == [
        {"status": "optional"},
        {"job_id": "step 1: list_applications.job_id"},
        {"content": "external"},
        {"job_id": "step 2: get_job.job_id", "note": "optional", "resume_id": "step 3: upload_resume.resume_id"},
    ]


def test_survives_a_json_round_trip():
    again = model.from_json(model.to_json(JOBS))
    assert [sample_chain(again, s) for s in range(20)] == [sample_chain(JOBS, s) for s in range(20)]


def _vet_clinic():
    """A pet exists or is registered; a visit is opened for it and completed; a vaccination is
    recorded for a pet at a completed visit (two preconditions, of two different entities)."""
    g = make_graph(
        {
            "list_pets": ([], ["pet_id"]),
            "register_pet": ([("name", True, "external")], ["pet_id"]),
            "create_visit": ([("pet_id", True, "internal"), ("reason", True, "external")], ["visit_id"]),
            "complete_visit": ([("visit_id", True, "internal")], ["visit_id"]),
            "record_vaccination": ([("pet_id", True, "internal"), ("visit_id", True, "internal"),
                                    ("vaccine", True, "external")], ["vaccination_id"]),
        },
        [("list_pets", "pet_id", "create_visit", "pet_id"), ("register_pet", "pet_id", "create_visit", "pet_id"),
         ("list_pets", "pet_id", "record_vaccination", "pet_id"),
         ("register_pet", "pet_id", "record_vaccination", "pet_id"),
         ("create_visit", "visit_id", "complete_visit", "visit_id"),
         ("create_visit", "visit_id", "record_vaccination", "visit_id")],
        [("register_pet", "record_vaccination"), ("complete_visit", "record_vaccination")],
    )
    for tool, crud in {"register_pet": "create", "create_visit": "create", "complete_visit": "update",
                       "record_vaccination": "create"}.items():
        g.nodes[tool]["crud"] = crud
    return g


def test_an_entity_of_the_initial_state_needs_no_step_to_establish_its_precondition():
    vet = _vet_clinic()
    # The pet exists (listed); the visit is created in the chain and completed: sound, although
    # register_pet, a precondition of record_vaccination, is not in the chain.
    assert validate_chain(vet, ["list_pets", "create_visit", "complete_visit", "record_vaccination"]) == []
    assert validate_chain(vet, ["register_pet", "create_visit", "complete_visit", "record_vaccination"]) == []
    # The sampler reaches that chain too, and every chain it draws still validates.
    chains = [sample_chain(vet, seed, max_len=5) for seed in range(200)]
    assert all(validate_chain(vet, c) == [] for c in chains)
    assert any("record_vaccination" in c and "register_pet" not in c for c in chains)


def test_a_chain_created_entity_still_owes_its_preconditions():
    vet = _vet_clinic()
    # The visit was created in the chain and never completed: no initial state can complete it.
    assert validate_chain(vet, ["list_pets", "create_visit", "record_vaccination"]) == [
        ("step 3: record_vaccination acts on an entity created in the chain, whose precondition "
         "complete_visit never establishes")]
    chains = [sample_chain(vet, seed, max_len=5) for seed in range(200)]
    assert not any("create_visit" in c and "record_vaccination" in c and "complete_visit" not in c for c in chains)


@settings(max_examples=100, deadline=None)
@given(g=random_graphs(), seed=st.integers(0, 2**32 - 1), max_len=st.integers(1, 8), steps=st.integers(1, 30))
def test_a_search_cut_short_by_its_budget_still_gives_a_valid_chain(g, seed, max_len, steps):
    """A dense graph's prerequisite search is exponential; past its budget a start is given up, and
    what is returned still validates (or is empty)."""
    from graph import sampler
    budget = sampler._Budget.STEPS
    sampler._Budget.STEPS = steps
    try:
        chain = sample_chain(g, seed, max_len)
    finally:
        sampler._Budget.STEPS = budget
    assert len(chain) <= max_len and (not chain or validate_chain(g, chain) == [])


def test_the_budget_leaves_a_search_that_finishes_within_it_unchanged():
    from graph import sampler
    before = [sample_chain(JOBS, seed, max_len=7) for seed in range(50)]
    budget = sampler._Budget.STEPS
    sampler._Budget.STEPS = 10**9
    try:
        assert [sample_chain(JOBS, seed, max_len=7) for seed in range(50)] == before
    finally:
        sampler._Budget.STEPS = budget
