"""Procedural-test verdicts, decided in the orchestrator from a worker's raw outcomes.

The worker is told only a test's inputs (initial state, arguments, clock) and answers what
happened: the return value, the exception (type and message) and the state changes. Whether
that is what the test expects is decided here, so a worker that lies can only claim outcomes
it could have produced anyway: it never learns the expected ones.
"""

from __future__ import annotations

import hashlib
import json

INPUTS = ("name", "kind", "initial_state", "arguments", "now")


def inputs(test: dict) -> dict:
    """What the worker may see of a test."""
    return {key: test[key] for key in INPUTS if key in test}


def signature(outcome: dict) -> str:
    """What a test's verdict depends on, hashed: the error's type, else the return value, and the
    state changes; a setup error is one of its own. Of two well-formed outcomes of one test with
    equal signatures, both pass or both fail. Computed here from a passing verdict of the verified code and in
    the worker from a mutant's raw outcome, so a mutant's tests can stop at the first that
    differs (mutation.run_mutant); the worker learns hashes of outcomes, never a test's expectations."""
    if "setup_error" in outcome:
        key = ["setup_error"]
    else:
        error = outcome.get("error")
        key = [error.get("type") if isinstance(error, dict) else error,
               None if error else outcome.get("returned"), outcome.get("changes")]
    return hashlib.sha256(json.dumps(normal(key), sort_keys=True).encode()).hexdigest()


def normal(value):
    """JSON round trip, so tuples equal lists and keys are strings."""
    return json.loads(json.dumps(value, sort_keys=True))


def normal_changes(changes: dict) -> dict:
    out = {}
    for table, change in sorted(changes.items()):
        entry = {"inserted": change.get("inserted", []), "updated": change.get("updated", {}),
                 "deleted": sorted(change.get("deleted", []))}
        if entry["inserted"] or entry["updated"] or entry["deleted"]:
            out[table] = entry
    return normal(out)


def comparable_changes(changes: dict) -> dict:
    """State changes as a test's expectation and an outcome are compared: an inserted row's null
    columns left out (a test may omit them, the worker lists them), and text holding a JSON object
    or array read as JSON (key order and spacing are the code's choice, not the test's)."""
    return {table: {"inserted": [{c: _json_text(v) for c, v in row.items() if v is not None}
                                 for row in change["inserted"]],
                    "updated": {key: {c: _json_text(v) for c, v in columns.items()}
                                for key, columns in change["updated"].items()},
                    "deleted": change["deleted"]}
            for table, change in changes.items()}


def _same_changes(expected: dict, actual: dict) -> bool:
    try:
        return comparable_changes(expected) == comparable_changes(normal_changes(actual))
    except (AttributeError, TypeError, KeyError):  # the worker's changes are not of the format
        return False


def _json_text(value):
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return {"json": json.loads(value)}  # a column value is never an object: no clash with one
        except ValueError:
            pass
    return value


def _well_formed(outcome) -> bool:
    if not isinstance(outcome, dict):
        return False
    if "setup_error" in outcome:
        return isinstance(outcome["setup_error"], str)
    error = outcome.get("error")
    error_ok = error is None or (isinstance(error, dict) and isinstance(error.get("type"), str)
                                 and isinstance(error.get("message"), str))
    return error_ok and isinstance(outcome.get("changes"), dict)


def judge(test: dict, outcome) -> dict:
    """One test's result: passed, and the problems a debugging model can act on."""
    verdict = {"name": test["name"], "kind": test["kind"], "passed": False, "problems": []}
    problems = verdict["problems"]
    if not _well_formed(outcome):
        problems.append("the sandbox worker sent a malformed outcome")
        return verdict
    if "setup_error" in outcome:
        problems.append(f"the test's initial_state is invalid: {outcome['setup_error']}")
        return verdict
    result, error, changes = outcome.get("returned"), outcome["error"], outcome["changes"]
    verdict.update(returned=result, error=error, changes=changes)
    if test["kind"] == "success":
        if error:
            problems.append(f"unexpected {error['type']}: {error['message']}")
        else:
            if normal(result) != normal(test.get("expect_return")):
                problems.append(
                    f"return value differs:\n  expected {json.dumps(test.get('expect_return'), sort_keys=True)}"
                    f"\n  actual   {json.dumps(result, sort_keys=True)}")
            expected = normal_changes(test.get("expect_changes", {}))
            if not _same_changes(expected, changes):
                problems.append(
                    f"state change differs:\n  expected {json.dumps(expected, sort_keys=True)}"
                    f"\n  actual   {json.dumps(changes, sort_keys=True)}")
    else:
        if error is None:
            problems.append(f"expected {test.get('expect_error')} but the call succeeded, returning "
                            f"{json.dumps(result, sort_keys=True)[:500]}")
        elif error["type"] != test.get("expect_error"):
            problems.append(f"expected {test.get('expect_error')} but got {error['type']}: {error['message']}")
        if changes:
            problems.append(f"a rejected call changed the state: {json.dumps(changes, sort_keys=True)}")
    verdict["passed"] = not problems
    return verdict
