"""The API's contract: one error body, documented on every operation; JSON bodies; bounded pages;
the schema and its docs behind a login."""

import pytest
from rest_framework.test import APIClient

from evals.catalog.models import Transcript
from tests.evals.gating_helpers import World
from tests.factories import TranscriptFactory, token_client

pytestmark = pytest.mark.django_db

OPERATIONS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def schema(lead):
    return token_client(lead).get("/api/schema/?format=json").json()


def operations(schema):
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method in OPERATIONS:
                yield path, method, op


def assert_error_body(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"detail", "code", "errors"}, body
    assert isinstance(body["detail"], str) and body["detail"]
    assert isinstance(body["errors"], list)
    assert all(isinstance(e["message"], str) for e in body["errors"])
    if code:
        assert body["code"] == code, body
    return body


def test_every_operation_documents_the_error_body(schema):
    error = {"$ref": "#/components/schemas/Error"}
    ops = list(operations(schema))
    assert len(ops) >= 35
    for path, method, op in ops:
        expected = {"400", "401", "403"} | ({"404"} if "{" in path else set())
        for status in expected:
            content = op["responses"].get(status, {}).get("content", {})
            assert content.get("application/json", {}).get("schema") == error, (
                path,
                method,
                status,
            )
    detail = schema["components"]["schemas"]["Error"]["properties"]["detail"]
    assert detail["type"] == "string"
    promote = schema["paths"]["/api/v1/rule-versions/{id}/promote/"]["post"]["responses"]
    assert promote["409"]["content"]["application/json"]["schema"] == error


def test_bodies_are_json_except_the_documented_imports(schema):
    imports = {
        "/api/v1/rules/import/",
        "/api/v1/transcripts/import/",
        "/api/v1/verdicts/import/",
        "/api/v1/classifier-logs/import/",
        "/api/v1/datasets/import/",
        "/api/v1/decision-kinds/import/",
        "/api/v1/marks/import/",
    }
    for path, method, op in operations(schema):
        media = set(op.get("requestBody", {}).get("content", {}))
        if path == "/api/otel/v1/traces":  # OTLP/HTTP: protobuf or JSON, as exporters send
            assert media == {"application/x-protobuf", "application/json"}, media
        elif path in imports:
            assert media <= {
                "application/x-ndjson",
                "application/jsonl",
                "application/json",
                "application/yaml",
                "application/x-yaml",
                "text/csv",
            }, (path, media)
        else:
            assert media <= {"application/json"}, (path, method, media)


def test_the_schema_documents_what_the_endpoints_return(schema):
    paths, components = schema["paths"], schema["components"]["schemas"]
    judge_runs = paths["/api/v1/judge-runs/"]["get"]["responses"]["200"]
    page = judge_runs["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    results = components[page]["properties"]["results"]
    assert results["type"] == "array" and results["items"]["$ref"].endswith("/JudgeRun")
    assert {"status", "progress", "cost", "verdicts"} <= set(components["JudgeRun"]["properties"])
    claimed = components["ClaimedCall"]["properties"]["transcript"]["$ref"].rsplit("/", 1)[1]
    assert {"id", "turns", "audio_url"} <= set(components[claimed]["properties"])
    assert {"metrics", "golden_set", "rule_versions"} <= set(
        components["GateRunResult"]["properties"]
    )


def test_the_schema_and_docs_need_a_login_unless_public(client, settings, reviewer):
    settings.DOCKET_API_DOCS_PUBLIC = False
    assert_error_body(APIClient().get("/api/schema/"), 401, "not_authenticated")
    docs = client.get("/api/docs/")
    assert docs.status_code == 302 and docs["Location"].startswith("/login/?next=/api/docs/")
    assert token_client(reviewer).get("/api/schema/").status_code == 200
    settings.DOCKET_API_DOCS_PUBLIC = True
    assert APIClient().get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200


def test_every_kind_of_error_has_the_one_shape(db, reviewer, engineer, lead):
    world = World()
    anonymous, as_reviewer, as_lead = APIClient(), token_client(reviewer), token_client(lead)
    assert_error_body(anonymous.get("/api/v1/rules/"), 401, "not_authenticated")
    bad_token = APIClient()
    bad_token.credentials(HTTP_AUTHORIZATION="Token nope")
    assert_error_body(bad_token.get("/api/v1/rules/"), 401, "authentication_failed")
    body = assert_error_body(as_reviewer.get("/api/v1/calibration/"), 403, "permission_denied")
    assert "view_calibration" in body["detail"]
    assert_error_body(as_reviewer.get("/api/v1/transcripts/nope/"), 404, "not_found")
    body = assert_error_body(
        as_reviewer.post("/api/v1/marks/", {"verdict": 1}, format="json"), 400, "invalid"
    )
    assert body["errors"] == [
        {"field": "correct", "message": "This field is required.", "code": "required"}
    ]
    assert body["detail"] == "correct: This field is required."
    body = assert_error_body(as_reviewer.post("/api/v1/marks/", {}, format="json"), 400, "invalid")
    assert body["detail"].endswith("(and 1 more)") and len(body["errors"]) == 2
    body = assert_error_body(
        token_client(engineer).post(
            "/api/v1/verdicts/import/",
            '{"transcript": "x"}\n',
            content_type="application/x-ndjson",
        ),
        400,
        "import_failed",
    )
    assert body["detail"].startswith("body:1: ") and body["errors"][0]["line"] == "1"
    promote = as_lead.post(
        f"/api/v1/rule-versions/{world.one_q.pk}/promote/", {"reason": "x"}, format="json"
    )
    # world.one_q is gated already: the state refuses it.
    assert "already in the gate" in assert_error_body(promote, 409, "promotion_refused")["detail"]
    assert_error_body(
        as_lead.post("/api/v1/samples/", "day=2026-01-01", content_type="text/plain"),
        415,
        "unsupported_media_type",
    )
    assert_error_body(
        as_reviewer.post(
            "/api/v1/marks/", "day=x", content_type="application/x-www-form-urlencoded"
        ),
        415,
    )
    assert_error_body(as_reviewer.get("/api/v1/marks/"), 405, "method_not_allowed")
    assert_error_body(
        as_reviewer.post("/api/v1/marks/", "{not json", content_type="application/json"),
        400,
        "parse_error",
    )


def test_a_nul_in_a_json_body_is_refused_naming_the_field(reviewer):
    body = assert_error_body(
        token_client(reviewer).post(
            "/api/v1/issue-rows/",
            {"transcript": "call-1", "what": "a\x00b", "severity": "minor"},
            format="json",
        ),
        400,
        "parse_error",
    )
    assert body["detail"].startswith("what: contains a NUL character")


@pytest.mark.parametrize(
    "query, field",
    [
        ("limit=99999999999999999999", "limit"),
        ("limit=0", "limit"),
        ("limit=-5", "limit"),
        ("limit=ten", "limit"),
        ("limit=1.5", "limit"),
        ("offset=-1", "offset"),
        ("offset=abc", "offset"),
        ("offset=99999999999999999999", "offset"),
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/transcripts/", "/api/v1/judge-runs/"])
def test_page_nonsense_is_a_400_naming_the_parameter(reviewer, path, query, field):
    body = assert_error_body(token_client(reviewer).get(f"{path}?{query}"), 400, "invalid")
    assert body["errors"][0]["field"] == field


@pytest.mark.parametrize(
    "path",
    ["/api/v1/verdicts/?limit=-1", "/api/v1/verdicts/?cursor=junk", "/api/v1/issue-rows/?limit=x"],
)
def test_keyset_pages_refuse_nonsense_too(lead, path):
    assert_error_body(token_client(lead).get(path), 400, "invalid")


def test_pages_are_clamped_to_the_largest(settings, reviewer):
    settings.DOCKET_API_MAX_LIMIT = 3
    for i in range(5):
        TranscriptFactory(external_id=f"call-{i}")
    assert Transcript.objects.count() == 5
    page = token_client(reviewer).get("/api/v1/transcripts/?limit=1000").json()
    assert page["count"] == 5 and len(page["results"]) == 3 and "limit=3" in page["next"]
    last = token_client(reviewer).get("/api/v1/transcripts/?limit=2&offset=4").json()
    assert len(last["results"]) == 1 and last["next"] is None
