"""The whole API fuzzed from its own schema (issue 10): schemathesis generates requests for every
operation /api/schema/ documents, as a lead and as a reviewer, and each answer must be no server
error, a documented status and content type, and a body that matches the documented schema.

Bounded and repeatable: EXAMPLES cases per operation, drawn with a fixed seed (derandomize).
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.evals.gating_helpers import World
from tests.factories import api_key, token_client

EXAMPLES = 4
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def api_schema(db, lead, wsgi_app):
    """The schema /api/schema/ serves, calling the app in-process (WSGI) with a world to find."""
    World()
    raw = token_client(lead).get("/api/schema/?format=json").json()
    schema = schemathesis.openapi.from_dict(raw)
    schema.app = wsgi_app
    return schema


def token_for(make_user, settings, role: str) -> dict:
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost"]  # the WSGI client's host
    user = make_user(role, username=f"fuzz-{role}")
    return {"Authorization": f"Token {api_key(user)}"}


FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the first failure is reported
)


def fuzz(schema, headers: dict) -> tuple[list[str], int, dict]:
    """Run every operation's cases; return one line per operation that failed a check, the
    number of operations, and how many answers of each status came back."""
    failures = []
    operations = 0
    statuses: dict[int, int] = {}
    for result in schema.get_all_operations():
        operations += 1
        operation = result.ok()

        @FUZZ
        @given(case=operation.as_strategy())
        def run(case):
            response = case.call_and_validate(headers=headers, checks=CHECKS)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        try:
            run()
        except Exception as exc:  # noqa: BLE001 - every operation is tried, then all are reported
            first = str(exc).strip().splitlines()
            failures.append(f"{operation.method.upper()} {operation.path}: {first[:12]}")
    return failures, operations, statuses


@pytest.mark.parametrize("role", ["lead", "reviewer"])
def test_every_operation_answers_as_documented(api_schema, make_user, settings, role):
    failures, operations, statuses = fuzz(api_schema, token_for(make_user, settings, role))
    assert not failures, "\n".join(failures)
    assert operations >= 35 and sum(statuses.values()) >= operations * 2, statuses
    print(f"{role}: {operations} operations, answers by status {sorted(statuses.items())}")


def test_an_api_path_no_route_matches_answers_the_error_body(lead):
    """Found by the fuzzing: a negative id matched no route and answered the console's HTML."""
    response = token_client(lead).get("/api/v1/gate-runs/-303892/")
    assert response.status_code == 404
    assert response.json() == {
        "detail": "No such API path: /api/v1/gate-runs/-303892/",
        "code": "not_found",
        "errors": [],
    }
