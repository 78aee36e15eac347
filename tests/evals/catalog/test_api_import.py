"""The import and read endpoints under /api/v1/, their permissions and their schema."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evals.catalog.models import Transcript, Turn
from evals.catalog.services.importing import transcripts_import
from evals.judging.models import Verdict
from evals.judging.services.importing import verdicts_import
from evals.rules.importing import rules_import
from evals.rules.models import Rule
from tests.evals.import_helpers import RULES_YAML, call
from tests.factories import api_key

pytestmark = pytest.mark.django_db

NDJSON = "application/x-ndjson"


def post(client, path, body, content_type=NDJSON, **extra):
    return client.post(f"/api/v1/{path}", data=body, content_type=content_type, **extra)


def verdict_line(
    transcript="call-1",
    rule="opening.greet-by-name",
    version=1,
    flagged=True,
    judge="gpt-4o/v1",
    **kw,
):
    record = {
        "transcript": transcript,
        "rule": rule,
        "rule_version": version,
        "flagged": flagged,
        "judge": judge,
        "turn": 0 if flagged else None,
        "confidence": 70,
        **kw,
    }
    return json.dumps({k: v for k, v in record.items() if v is not None})


@pytest.fixture
def loaded(db):
    rules_import(text=RULES_YAML)
    transcripts_import(lines=[call("call-1"), call("call-2")])
    verdicts_import(
        lines=[
            verdict_line("call-1"),
            verdict_line("call-2", flagged=False),
            verdict_line("call-1", rule="boundaries.no-rubric-leak", flagged=False),
            verdict_line("call-1", judge="claude/v2", flagged=False),
        ]
    )


def test_engineer_imports_rules_then_the_same_file_is_a_noop(client, engineer):
    client.force_login(engineer)
    response = post(client, "rules/import/", RULES_YAML, content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert response.json()["created"] == 3
    again = post(client, "rules/import/", RULES_YAML, content_type="application/yaml")
    assert again.status_code == 200
    assert (again.json()["created"], again.json()["unchanged"]) == (0, 3)
    as_json = json.dumps(
        {"rules": [{"id": "closing.thank", "group": "closing", "text": "Thank them."}]}
    )
    assert (
        post(client, "rules/import/", as_json, content_type="application/json").status_code == 201
    )


def test_reviewer_may_not_import_and_anonymous_must_authenticate(client, reviewer):
    assert post(client, "transcripts/import/", call()).status_code == 401
    client.force_login(reviewer)
    response = post(client, "transcripts/import/", call())
    assert response.status_code == 403
    assert "import_data" in response.json()["detail"]
    assert Transcript.objects.count() == 0
    assert (
        post(client, "rules/import/", RULES_YAML, content_type="application/yaml").status_code
        == 403
    )
    assert post(client, "verdicts/import/", verdict_line()).status_code == 403


def test_token_authentication_imports_transcripts(client, engineer):
    key = api_key(engineer)
    body = "\n".join([call("call-1"), call("call-2")]) + "\n"
    response = post(client, "transcripts/import/", body, HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 201, response.content
    assert response.json()["created"] == 2 and response.json()["details"]["turns"] == 6
    bad = post(client, "transcripts/import/", body, HTTP_AUTHORIZATION="Token not-a-key")
    assert bad.status_code == 401


def test_bad_line_is_a_400_naming_line_and_field_and_nothing_is_written(client, engineer):
    client.force_login(engineer)
    body = "\n".join([call("call-1"), call("call-2", audio_url="javascript:alert(1)")])
    response = post(client, "transcripts/import/", body)
    assert response.status_code == 400
    payload = response.json()
    assert payload["detail"].startswith("body:2: audio_url: only http(s) links")
    assert payload["errors"][0] == {
        "line": "2",
        "field": "audio_url",
        "reason": payload["errors"][0]["reason"],
        "message": payload["detail"],
    }
    assert Transcript.objects.count() == 0


def test_transcripts_import_accepts_a_json_array_body(client, engineer):
    client.force_login(engineer)
    body = json.dumps([json.loads(call("call-1")), json.loads(call("call-2"))], indent=1)
    response = post(client, "transcripts/import/", body, content_type="application/json")
    assert response.status_code == 201 and response.json()["created"] == 2


def test_transcript_replace_and_default_agent_through_query_parameters(client, engineer):
    client.force_login(engineer)
    bare = call("call-1", agent=None, agent_version=None)
    missing = post(client, "transcripts/import/", bare)
    assert missing.status_code == 400
    # The API names its own query parameters, not the command's flags.
    assert missing.json()["detail"] == (
        "body:1: agent: missing: set it on the line, or give the agent and version of lines that "
        "name none (?agent=&agent_version=)"
    )
    assert "--agent" not in missing.content.decode()
    response = post(client, "transcripts/import/?agent=phone-screen&agent_version=v9", bare)
    assert response.status_code == 201
    changed = call("call-1", turns=[{"speaker": "agent", "text": "New."}])
    refused = post(client, "transcripts/import/", changed)
    assert refused.status_code == 400 and "replace" in refused.json()["detail"]
    replaced = post(client, "transcripts/import/?replace=1", changed)
    assert replaced.status_code == 201 and replaced.json()["replaced"] == 1
    assert list(Turn.objects.values_list("text", flat=True)) == ["New."]


def test_verdicts_import_and_confidence_error(client, engineer):
    rules_import(text=RULES_YAML)
    transcripts_import(lines=[call("call-1")])
    client.force_login(engineer)
    bad = post(client, "verdicts/import/", verdict_line(confidence=101))
    assert bad.status_code == 400
    assert (
        bad.json()["detail"] == "body:1: confidence: must be a whole number from 0 to 100, not 101"
    )
    ok = post(client, "verdicts/import/", verdict_line())
    assert ok.status_code == 201 and ok.json()["created"] == 1
    assert post(client, "verdicts/import/", verdict_line()).json()["unchanged"] == 1
    assert Verdict.objects.count() == 1


def test_reviewer_reads_transcripts_with_turns(client, reviewer, loaded):
    client.force_login(reviewer)
    listing = client.get("/api/v1/transcripts/")
    assert listing.status_code == 200
    assert {t["id"] for t in listing.json()["results"]} == {"call-1", "call-2"}
    detail = client.get("/api/v1/transcripts/call-1/").json()
    assert detail["agent"] == "phone-screen" and detail["metadata"] == {"site": "eu"}
    assert [t["speaker"] for t in detail["turns"]] == ["agent", "user", "agent"]
    assert detail["turns"][0]["start_ms"] == 0 and detail["turns"][0]["phase"] == "opening"
    assert client.get("/api/v1/transcripts/nope/").status_code == 404
    # The calls page's filters, parsed by the page's own form.
    only = client.get("/api/v1/transcripts/?q=call-2&agent_version=phone-screen:2026-11-28.1")
    assert [t["id"] for t in only.json()["results"]] == ["call-2"]
    assert client.get("/api/v1/transcripts/?agent=other").json()["count"] == 0
    bad = client.get("/api/v1/transcripts/?has_audio=maybe&started_from=yesterday").json()
    assert {e["field"] for e in bad["errors"]} == {"has_audio", "started_from"}


def test_rules_list_has_every_version(client, reviewer, loaded):
    rules_import(text=RULES_YAML.replace("once, by name", "by name"))
    client.force_login(reviewer)
    rules = {r["id"]: r for r in client.get("/api/v1/rules/").json()["results"]}
    assert [v["number"] for v in rules["opening.greet-by-name"]["versions"]] == [1, 2]
    assert rules["boundaries.no-rubric-leak"]["safety"] is True
    one = client.get("/api/v1/rules/timing.no-long-silence/").json()
    assert one["versions"][0]["detector"]["name"] == "silence_before_agent"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", 4),
        ("?rule=opening.greet-by-name", 3),
        ("?rule=opening.greet-by-name&version=1", 3),
        ("?version=2", 0),
        ("?judge=claude/v2", 1),
        ("?transcript=call-2", 1),
        ("?flagged=true", 1),
        ("?flagged=yes", 1),
        ("?flagged=false&transcript=call-1", 2),
        ("?errored=no", 4),
    ],
)
def test_verdict_filters(client, reviewer, loaded, query, expected):
    client.force_login(reviewer)
    response = client.get(f"/api/v1/verdicts/{query}")
    assert response.status_code == 200
    assert len(response.json()["results"]) == expected


def test_verdict_list_shape_and_bad_filters(client, reviewer, loaded):
    client.force_login(reviewer)
    row = client.get("/api/v1/verdicts/?flagged=1").json()["results"][0]
    assert {
        k: row[k]
        for k in ("transcript", "rule", "rule_version", "judge", "flagged", "turn", "turns")
    } == {
        "transcript": "call-1",
        "rule": "opening.greet-by-name",
        "rule_version": 1,
        "judge": "gpt-4o/v1",
        "flagged": True,
        "turn": 0,
        "turns": [0],
    }
    assert client.get("/api/v1/verdicts/?flagged=maybe").status_code == 400
    assert client.get("/api/v1/verdicts/?version=two").status_code == 400


def test_reads_make_the_same_number_of_queries_however_many_rows(client, reviewer, loaded):
    paths = (
        "/api/v1/verdicts/",
        "/api/v1/rules/",
        "/api/v1/transcripts/",
        "/api/v1/transcripts/call-1/",
    )
    client.force_login(reviewer)

    def counts():
        result = []
        for path in paths:
            with CaptureQueriesContext(connection) as queries:
                assert client.get(path).status_code == 200
            result.append(len(queries))
        return result

    before = counts()
    transcripts_import(lines=[call(f"more-{i}") for i in range(20)])
    verdicts_import(lines=[verdict_line(f"more-{i}") for i in range(20)])
    rules_import(text=RULES_YAML.replace("three seconds", "two seconds"))
    assert counts() == before
    assert max(before) <= 8


def test_reads_need_a_console_role(client, make_user):
    client.force_login(make_user())
    assert client.get("/api/v1/verdicts/").status_code == 403
    assert client.get("/api/v1/rules/").status_code == 403


def test_schema_lists_the_import_and_read_endpoints(client, reviewer):
    client.force_login(reviewer)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    for path in (
        "/api/v1/rules/import/",
        "/api/v1/transcripts/import/",
        "/api/v1/verdicts/import/",
        "/api/v1/transcripts/",
        "/api/v1/transcripts/{id}/",
        "/api/v1/rules/",
        "/api/v1/verdicts/",
    ):
        assert path in paths, path
    assert paths["/api/v1/transcripts/import/"]["post"]["operationId"] == "transcripts_import"
    params = {p["name"] for p in paths["/api/v1/verdicts/"]["get"]["parameters"]}
    assert {"rule", "version", "judge", "transcript", "flagged"} <= params
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html and "cdn.jsdelivr" not in html
    assert "<style>" not in html and "<script>" not in html  # CSP: no inline style or script
    assert Rule.objects.count() == 0
