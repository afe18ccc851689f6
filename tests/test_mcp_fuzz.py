"""The HTTP control API under fuzzing: schemathesis generates requests from the OpenAPI document
the server itself serves (valid and invalid bodies, odd ids), with the control token and
without, and no answer may be a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from starlette.testclient import TestClient

from mcp_servers.control_token import bearer
from mcp_servers.http_app import create_app
from mcp_servers.runtime import Environment

TOKEN = "fuzz-token-0123456789"
AUTH = bearer(TOKEN)


@pytest.fixture(scope="module")
def app(fixture_domain):
    with Environment(fixture_domain, call_timeout=0.5, max_episodes=64) as env:
        yield create_app(env, token=TOKEN)


@pytest.mark.parametrize("headers", [AUTH, {}, bearer("wrong-token-0123456789")], ids=["token", "none", "wrong"])
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_request_gets_a_server_error(app, mode, headers):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=AUTH)  # the document the server serves
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10

    for operation in operations:
        if mode == GenerationMode.NEGATIVE and "{" not in operation.path and operation.method.upper() != "POST":
            continue  # nothing to make invalid
        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def fuzz(case):
            answer = case.call_and_validate(checks=[not_a_server_error], headers=headers)
            if headers != AUTH:  # every control route refuses a caller without the token
                assert answer.status_code == 401 and "token" in answer.json()["error"]

        fuzz()


def test_bodies_that_used_to_give_500_get_400_with_a_reason(app):
    client = TestClient(app, headers=AUTH)
    for body in (b'{"episode_id": 5}', b'{"task_id": []}', b'{"task_id": NaN}', b"[" * 50_000 + b"]" * 50_000,
                 b'{"task_id": "finish_dune", "extra": 1}', b"\xff\xfe", b'"just a string"'):
        answer = client.post("/episodes", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 400, (body[:40], answer.text)
        assert answer.json()["error"].startswith(("invalid body", "the body is"))
    assert client.get("/openapi.json").json()["paths"]["/episodes"]["post"]["requestBody"]
