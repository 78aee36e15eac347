"""The judge connection page: the judge's and the classifiers' model settings (never a key) and
a test that sends one real prompt through the real client to the local OpenAI-protocol server."""

import json
import re

import pytest
from django.urls import reverse

from evals.judging.client import judge_cost
from evals.judging.prompt import SYSTEM_PROMPT
from evals.judging.services.connection import judge_connection, url_shown
from tests.evals.classifier_helpers import answer_classifiers
from tests.factories import logged_in

pytestmark = pytest.mark.django_db


def text(resp) -> str:
    return " ".join(resp.content.decode().split())


def test_the_page_shows_the_settings_and_never_the_key(client, engineer, settings):
    settings.JUDGE_BASE_URL = "http://judge:s3cret-pass@10.0.0.5:8001/v1"
    settings.JUDGE_API_KEY = "sk-never-shown-123"
    settings.JUDGE_MODEL = "Qwen/Qwen2.5-7B-Instruct"
    settings.DOCKET_CLASSIFIER_BASE_URL = ""
    settings.DOCKET_CLASSIFIER_API_KEY = ""
    html = text(logged_in(client, engineer).get(reverse("judge-connection")))
    assert "sk-never-shown-123" not in html and "s3cret-pass" not in html
    assert 'data-testid="judge-server">http://10.0.0.5:8001/v1<' in html
    assert 'data-testid="judge-model">Qwen/Qwen2.5-7B-Instruct<' in html
    assert 'data-testid="judge-key">set<' in html
    assert 'data-testid="judge-status">configured<' in html
    # No price for that model: costs count as $0, and the page says so.
    assert "none set: costs count as $0" in html
    # The classifiers have no server: their test is disabled and says why.
    assert 'data-testid="classifier-status">not configured<' in html
    assert re.search(r'action="/judge-connection/classifier/test/".*?disabled', html)


def test_url_shown_drops_only_a_credential():
    assert url_shown("https://u:p@host:8/v1?x=1") == "https://host:8/v1?x=1"
    assert url_shown("http://127.0.0.1:11434/v1") == "http://127.0.0.1:11434/v1"
    assert url_shown("") == ""


def test_testing_the_judge_sends_one_real_judge_prompt_and_shows_answer_latency_cost(
    client, engineer, fake_judge, settings
):
    fake_judge.flag = {"asking.one-question": [2]}
    resp = logged_in(client, engineer).post(
        reverse("judge-connection-test", args=["judge"]), headers={"HX-Request": "true"}
    )
    html = text(resp)
    assert resp.status_code == 200 and 'id="test-judge"' in html
    (req,) = fake_judge.requests
    body = req["body"]
    # The judge's own prompt and answer schema, through the judge's client.
    assert body["model"] == "gpt-4o-mini" and body["messages"][0]["content"] == SYSTEM_PROMPT
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["asking.one-question"]
    assert req["headers"]["authorization"] == "Bearer test-key"
    assert 'data-testid="judge-answer">flagged at turn 2 (major, confidence 90)' in html
    assert "matches" in html
    # The cost is the judge's own accounting of the tokens the server reported.
    prompt_chars = sum(len(m["content"]) for m in body["messages"])
    tokens_in = prompt_chars // 4
    answer = {  # what the fake server answered, as it counts it
        "asking.one-question": {
            "reason": "Checked asking.one-question.",
            "flagged": True,
            "turns": [2],
            "severity": "major",
            "confidence": 90,
        }
    }
    tokens_out = len(json.dumps(answer)) // 4
    cost = judge_cost("gpt-4o-mini", tokens_in, tokens_out)
    assert cost > 0
    assert f'data-testid="judge-cost">${cost:.6f}' in html
    assert f"{tokens_in:,} in, {tokens_out:,} out" in html
    assert re.search(r'data-testid="judge-latency">[\d,]+ ms<', html)


def test_a_failing_judge_says_why(client, lead, fake_judge):
    fake_judge.mode = "error500"
    html = text(
        logged_in(client, lead).post(reverse("judge-connection-test", args=["judge"]), follow=True)
    )
    assert 'data-testid="judge-result"><strong>Failed</strong>' in html
    assert "server answered HTTP 500 after 0 retries" in html


def test_testing_the_classifier_model_sends_its_own_prompt(client, lead, fake_judge, settings):
    settings.DOCKET_CLASSIFIER_BASE_URL = fake_judge.base_url
    settings.DOCKET_CLASSIFIER_API_KEY = ""
    settings.DOCKET_CLASSIFIER_MODEL = "gpt-4o-mini"
    answer_classifiers(fake_judge)
    fake_judge.answers["frustration"] = {
        "reason": "Angry at the bot itself.",
        "target": "ai",
        "confidence": 88,
    }
    html = text(logged_in(client, lead).post(reverse("judge-connection-test", args=["classifier"])))
    (req,) = fake_judge.requests
    assert req["body"]["response_format"]["json_schema"]["name"] == "frustration"
    assert "LATEST MESSAGE" in req["body"]["messages"][-1]["content"]
    answered = 'data-testid="classifier-answer">target ai (confidence 88): Angry at the bot'
    assert answered in html
    assert "matches" in html and 'data-testid="classifier-cost">$0.0000' in html


def test_nothing_configured_nothing_called(client, engineer, settings):
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    assert not judge_connection().configured
    html = text(logged_in(client, engineer).post(reverse("judge-connection-test", args=["judge"])))
    assert "nothing to call: set JUDGE_BASE_URL or JUDGE_API_KEY" in html
    assert logged_in(client, engineer).post("/judge-connection/nope/test/").status_code == 404


def test_reviewers_do_not_see_it(client, make_user):
    reviewer = make_user("reviewer", username="priya")
    assert logged_in(client, reviewer).get(reverse("judge-connection")).status_code == 403
