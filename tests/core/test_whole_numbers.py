"""One parser for whole numbers (core.parsing.whole_number): "²" is a digit to str.isdigit() but
no number, and 2**63 fits no column; each parameter that took one to a 500 answers 400 now."""

import json

import pytest
from django.test import RequestFactory

from core.errors import DomainError
from core.parsing import MAX_INT, MAX_INT32, whole_number
from evals.evalruns.services.datasets import dataset_resolve
from evals.trajectories.axes import _task_order
from tests import factories as f
from tests.factories import token_client

BAD = ["²", "٣", str(2**63), "1.5", "-1", "0x10", "1e3", "", " "]


@pytest.mark.parametrize("raw", BAD)
def test_whole_number_refuses_what_no_column_takes_and_names_the_field(raw):
    with pytest.raises(DomainError) as exc:
        whole_number(raw, field="judge", low=0)
    assert exc.value.field == "judge"


def test_whole_number_reads_ascii_digits_within_the_bounds():
    assert whole_number(" 42 ", field="x") == 42
    assert whole_number(MAX_INT, field="x") == MAX_INT
    assert whole_number("-3", field="x", low=-5) == -3
    assert whole_number("", field="x", default=None) is None
    assert whole_number(None, field="x", default=7) == 7
    for bad in (True, 1.0, [1], str(MAX_INT32 + 1)):
        with pytest.raises(DomainError):
            whole_number(bad, field="x", high=MAX_INT32)


def test_a_task_named_with_unicode_digits_sorts_as_text():
    assert sorted(["10", "²", "2"], key=_task_order) == ["2", "10", "²"]


@pytest.mark.django_db
@pytest.mark.parametrize("version", ["²", str(2**63)])
def test_a_dataset_version_that_is_no_number_is_refused(version):
    with pytest.raises(DomainError) as exc:
        dataset_resolve(f"tools@{version}")
    assert exc.value.field == "dataset"


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["²", str(2**63)])
def test_pages_answer_400_for_a_bad_whole_number(client, lead, value):
    client.force_login(lead)
    rv = f.RuleVersionFactory()
    for url in (
        f"/calibration/?rv={value}",
        f"/calibration/export.csv?rv={value}",
        f"/calibration/rule-versions/{rv.pk}/?judge={value}",
        f"/classifiers/classifiers.injection/?judge={value}",
    ):
        r = client.get(url)
        assert r.status_code == 400, (url, r.status_code)
    r = client.post(f"/calibration/rule-versions/{rv.pk}/promote/", {"judge": value})
    assert r.status_code == 400 and b"judge" in r.content
    r = client.post("/issues/bulk/", {"row": value, "action": "assign", "assignee": ""})
    assert r.status_code == 400 and b"row" in r.content


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["²", str(2**63)])
def test_the_api_answers_400_for_a_bad_whole_number(lead, value):
    c = token_client(lead)
    r = c.get(f"/api/v1/webhook-deliveries/?webhook={value}")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "webhook"
    r = c.get(f"/api/v1/classifier-thresholds/classifiers.injection/?judge={value}")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "judge"


@pytest.mark.django_db
@pytest.mark.parametrize("size", [1.35e17, 2**31, 2**63, "²"])
def test_a_sample_size_past_the_column_is_refused(lead, size):
    r = token_client(lead).post("/api/v1/samples/", {"size": size}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "size", r.json()


@pytest.mark.django_db
def test_options_on_an_agent_version_describes_it(lead):
    v = f.AgentVersionFactory()
    c = token_client(lead)
    r = c.options(f"/api/v1/agents/{v.agent.name}/versions/{v.version}/")
    assert r.status_code == 200 and r.json()["name"]
    r = c.options(f"/api/v1/agents/{v.agent.name}/versions/nope/")
    assert r.status_code == 200  # what the PUT takes, though that version does not exist


def test_an_api_500_with_debug_off_is_the_json_error_body():
    from django.urls import get_resolver

    from console import urls

    assert urls.handler500 == "console.views.server_error"
    handler = get_resolver().resolve_error_handler(500)
    api = handler(RequestFactory().get("/api/v1/transcripts/"))
    assert api.status_code == 500 and api["Content-Type"] == "application/json"
    body = json.loads(api.content)
    assert body["code"] == "server_error" and body["detail"] and body["errors"] == []
    page = handler(RequestFactory().get("/review/"))
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_a_json_body_names_a_nul_and_an_integer_past_64_bits(lead):
    c = token_client(lead)
    for body, field in (
        (b'{"day": "2026-12-01\\u0000"}', "day"),
        (b'{"size": 18446744073709551616}', "size"),
        (b'{"size": [1, -9223372036854775809]}', "size[1]"),
    ):
        r = c.post("/api/v1/samples/", body, content_type="application/json")
        assert r.status_code == 400, r.content
        (error,) = r.json()["errors"]
        assert error["field"] == field and error["code"] == "parse_error"


def test_an_integer_past_64_bits_is_refused_not_read_as_a_float():
    from core.parsing import ParseProblem, json_value

    with pytest.raises(ParseProblem, match="beyond 64 bits") as exc:
        json_value(b'{"turns": [{"start_ms": 18446744073709551616}]}')
    assert exc.value.field == "turns[0].start_ms"
    assert json_value(b'{"id": "12345678901234567890123", "x": 1e30}')["x"] == 1e30
