"""The three paths that run generated code apply the one policy: the same rule sets, by identity,
and differences only in the Policy's named parameters."""

from __future__ import annotations

import dataclasses
import inspect

from domains.db_layer import compile_db
from domains.spec import Column, DBSchema, Table
from mcp_servers import pool
from mcp_servers.runtime import Environment
from sandbox import database, generated, guard, lockdown, policy
from sandbox.policy import CHAIN_PROGRAMS, EPISODES, RULES, TOOL_TESTS, Policy
from tasks import execute
from verification.sandbox import Sandbox

SCHEMA = DBSchema(tables=[Table(name="item", id_prefix="IT", columns=[
    Column(name="item_id", type="string", primary_key=True, nullable=False)])])
PARAMETERS = {"database", "uid_per_child", "memory_mb", "file_mb", "open_files", "processes", "packages"}


def test_every_layer_takes_its_rules_from_the_one_rule_set():
    assert lockdown.RULES is RULES and database.RULES is RULES and generated.RULES is RULES
    assert guard.ALLOWED_MODULES is RULES.allowed_modules and guard.FORBIDDEN_NAMES is RULES.forbidden_names
    assert RULES.denied_syscalls is policy.DENIED_SYSCALLS and RULES.landlock_write == policy.LANDLOCK_WRITE
    assert RULES.sqlite_denied_functions is policy.SQLITE_DENIED_FUNCTIONS


def test_each_path_runs_under_its_profile_of_the_one_policy(fixture_domain):
    assert inspect.signature(Sandbox).parameters["policy"].default is TOOL_TESTS
    assert pool.POLICY is EPISODES
    assert inspect.signature(execute.run_chain).parameters["policy"].default is CHAIN_PROGRAMS
    with Sandbox(compile_db("demo", SCHEMA)) as box, Environment(fixture_domain) as env:
        chains = execute.template_for(512)
        live = {"tool tests": box.policy, "episodes": env.pool.policy, "chain programs": chains.policy}
        servers = {"tool tests": box.server, "episodes": env.pool.server, "chain programs": chains.server}
        for path, applied in live.items():
            assert applied.rules is RULES, path
            assert servers[path].policy is applied, path
            assert applied.off == frozenset(), path
        assert box.policy.database == "scratch" and env.pool.policy.database == "persistent"
        assert chains.policy.database == "none"


def test_the_profiles_differ_only_in_named_documented_parameters():
    fields = {f.name for f in dataclasses.fields(Policy)} - {"rules", "off"}
    assert fields == PARAMETERS
    for name in fields:
        assert f"\n    {name}" in Policy.__doc__ or f", {name}" in Policy.__doc__, name
    profiles = (TOOL_TESTS, EPISODES, CHAIN_PROGRAMS)
    for a in profiles:
        for b in profiles:
            differ = {f for f in fields | {"rules", "off"} if getattr(a, f) is not getattr(b, f)
                      and getattr(a, f) != getattr(b, f)}
            assert differ <= PARAMETERS, differ
    # where the runtime owns the transaction, tools may not run PRAGMA or BEGIN/COMMIT themselves
    assert EPISODES.runtime_owns_transactions and not TOOL_TESTS.runtime_owns_transactions
