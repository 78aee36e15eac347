"""The browsing pages: calls, a call, rules, a rule, verdicts, and the dashboard, for each role."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.factories import (
    AgentVersionFactory,
    RuleFactory,
    RuleVersionFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db

ROLES = ["reviewer", "engineer", "lead"]


@pytest.fixture
def call(db):
    """A call with phases, a tool call and its result, a
    low-confidence turn, and verdicts of every kind."""
    t = TranscriptFactory(
        external_id="call-000123",
        scenario="golden/backend-senior-01",
        audio_url="/static/demo/audio/x.ogg",
        started_at=timezone.now() - dt.timedelta(days=1),
    )
    TurnFactory(
        transcript=t,
        index=0,
        speaker="agent",
        text="Hi Dana, ready to start?",
        start_ms=0,
        end_ms=4200,
        phase="opening",
    )
    TurnFactory(
        transcript=t,
        index=1,
        speaker="user",
        text="Yes, ready.",
        start_ms=4800,
        end_ms=6100,
        phase="opening",
        asr_confidence=0.41,
    )
    TurnFactory(
        transcript=t,
        index=2,
        speaker="agent",
        text="",
        start_ms=6500,
        end_ms=6600,
        phase="past-roles",
        tool_calls=[
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "get_user_details", "arguments": '{"user_id":"dana_1"}'},
            }
        ],
    )
    TurnFactory(
        transcript=t,
        index=3,
        speaker="tool",
        text='{"name": "Dana", "roles": 2}',
        tool_call_id="call_abc",
        phase="past-roles",
    )
    TurnFactory(
        transcript=t,
        index=4,
        speaker="agent",
        text="Tell me about Halcyon.",
        start_ms=7000,
        end_ms=9500,
        phase="past-roles",
    )
    greet = RuleVersionFactory(
        rule=RuleFactory(rule_id="opening.greet-by-name", group="opening"), number=1
    )
    one_q = RuleVersionFactory(
        rule=RuleFactory(rule_id="asking.one-question", group="asking", severity="major"),
        number=2,
        status="candidate",
    )
    leak = RuleVersionFactory(
        rule=RuleFactory(rule_id="boundaries.no-rubric-leak", group="boundaries", safety=True),
        number=1,
    )
    close = RuleVersionFactory(
        rule=RuleFactory(rule_id="closing.wait-for-no", group="closing"), number=1
    )
    VerdictFactory(
        transcript=t,
        rule_version=one_q,
        flagged=True,
        turn=0,
        turns=[0, 4],
        severity="major",
        rationale="Two questions in one turn.",
    )
    VerdictFactory(
        transcript=t, rule_version=greet, flagged=False, rationale="Greeted once by name."
    )
    VerdictFactory(transcript=t, rule_version=leak, flagged=False, error="judge timeout after 30s")
    VerdictFactory(
        transcript=t,
        rule_version=close,
        flagged=True,
        severity="minor",
        rationale="Ended without asking.",
    )
    return t


@pytest.fixture
def as_role(client, make_user):
    def login(role):
        client.force_login(make_user(role))
        return client

    return login


PAGES = [
    ("dashboard", {}),
    ("transcript-list", {}),
    ("transcript-detail", {"external_id": "call-000123"}),
    ("rule-list", {}),
    ("rule-detail", {"rule_id": "asking.one-question"}),
    ("verdict-list", {}),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name,kwargs", PAGES)
def test_every_role_sees_every_browsing_page(as_role, call, role, name, kwargs):
    response = as_role(role).get(reverse(name, kwargs=kwargs))
    assert response.status_code == 200
    assert b"<main" in response.content


@pytest.mark.parametrize("name,kwargs", PAGES)
def test_logged_out_is_sent_to_login(client, call, name, kwargs):
    response = client.get(reverse(name, kwargs=kwargs))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name,kwargs", PAGES)
def test_user_without_view_console_gets_403(client, make_user, call, name, kwargs):
    client.force_login(make_user())
    assert client.get(reverse(name, kwargs=kwargs)).status_code == 403


def test_unknown_call_and_rule_are_404(as_role):
    c = as_role("reviewer")
    assert c.get(reverse("transcript-detail", args=["nope"])).status_code == 404
    assert c.get(reverse("rule-detail", args=["nope.rule"])).status_code == 404


# The call page ---------------------------------------------------------------------------------


def test_call_page_shows_header_turns_phases_and_player_markup(as_role, call):
    html = (
        as_role("reviewer").get(reverse("transcript-detail", args=["call-000123"])).content.decode()
    )
    assert "golden/backend-senior-01" in html
    assert call.checksum[:12] in html and call.checksum not in html.replace(
        f"sha256 {call.checksum}", ""
    )
    assert 'id="player" data-player' in html and 'src="/static/demo/audio/x.ogg"' in html
    for rate in ("1", "1.25", "1.5", "2"):
        assert f'data-speed="{rate}"' in html
    assert 'id="turn-1"' in html and 'data-start-ms="4800"' in html and 'data-end-ms="6100"' in html
    assert "0:04" in html  # turn 1 starts at 4.8 s
    assert html.count('class="phase-head"') == 2  # opening, past-roles: one header per change
    assert "ASR 0.41" in html
    assert "js/player.js" in html


def test_call_page_folds_tool_calls_and_pretty_prints_their_json(as_role, call):
    html = (
        as_role("reviewer").get(reverse("transcript-detail", args=["call-000123"])).content.decode()
    )
    assert '<details class="fold tool-call">' in html
    assert "get_user_details" in html
    assert (
        "&quot;user_id&quot;: &quot;dana_1&quot;" in html
    )  # indented JSON, not the raw one-line string
    assert "Result of <code>get_user_details</code>" in html
    assert "&quot;roles&quot;: 2" in html


def test_call_page_places_verdicts_by_the_turns_they_cite(as_role, call):
    page = as_role("reviewer").get(reverse("transcript-detail", args=["call-000123"]))
    html = page.content.decode()
    cp = page.context["call"]
    assert [v.rule_version.rule.rule_id for v in cp.call_verdicts] == [
        "closing.wait-for-no",
        "boundaries.no-rubric-leak",
    ]
    assert [v.rule_version.rule.rule_id for v in cp.turns[0].verdicts] == ["asking.one-question"]
    assert [v.rule_version.rule.rule_id for v in cp.turns[4].also_cited_by] == [
        "asking.one-question"
    ]
    assert [v.rule_version.rule.rule_id for v in cp.passed_verdicts] == ["opening.greet-by-name"]
    assert cp.verdict_counts == {"total": 4, "flagged": 2, "errored": 1, "passed": 1}
    # the verdict card follows turn 0 and comes before turn 1
    assert (
        html.index('id="turn-0"')
        < html.index("Two questions in one turn.")
        < html.index('id="turn-1"')
    )
    assert "judge timeout after 30s" in html


def test_call_without_audio_has_no_player(as_role):
    t = TranscriptFactory(external_id="text-only")
    TurnFactory(transcript=t, index=0, text="Hello there.")
    html = (
        as_role("engineer").get(reverse("transcript-detail", args=["text-only"])).content.decode()
    )
    assert "data-player" not in html
    assert "Hello there." in html


def test_call_page_runs_a_bounded_number_of_queries_for_a_300_turn_call(
    as_role, django_assert_max_num_queries
):
    t = TranscriptFactory(external_id="long-call", audio_url="https://rec.example.com/long.ogg")
    from evals.catalog.models import Turn

    Turn.objects.bulk_create(
        [
            Turn(
                transcript=t,
                index=i,
                speaker="agent" if i % 2 == 0 else "user",
                text=f"Turn {i}.",
                start_ms=i * 3000,
                end_ms=i * 3000 + 2500,
                phase=["opening", "asking", "closing"][i * 3 // 300],
            )
            for i in range(300)
        ]
    )
    for i in range(30):
        VerdictFactory(
            transcript=t,
            flagged=i % 3 == 0,
            turn=(i * 10) if i % 3 == 0 else None,
            turns=[i * 10] if i % 3 == 0 else [],
            severity="minor" if i % 3 == 0 else "",
        )
    c = as_role("reviewer")
    # session + user + permissions (3), roles (1), call, turns, verdicts
    with django_assert_max_num_queries(9):
        response = c.get(reverse("transcript-detail", args=["long-call"]))
    assert response.content.decode().count('class="turn turn-') == 300


# Lists -----------------------------------------------------------------------------------------


def _call_ids(response):
    return [row.transcript.external_id for row in response.context["page"].rows]


def test_calls_list_filters(as_role, call):
    other_version = AgentVersionFactory(version="2026-11-21.1")
    TranscriptFactory(
        external_id="call-old",
        agent_version=other_version,
        language="de",
        scenario="live/x",
        started_at=timezone.now() - dt.timedelta(days=30),
    )
    c = as_role("reviewer")
    url = reverse("transcript-list")
    assert set(_call_ids(c.get(url))) == {"call-000123", "call-old"}
    assert _call_ids(c.get(url, {"q": "000123"})) == ["call-000123"]
    key = f"{other_version.agent.name}:{other_version.version}"
    assert _call_ids(c.get(url, {"agent_version": key})) == ["call-old"]
    assert _call_ids(c.get(url, {"agent_version": other_version.version})) == ["call-old"]
    assert key in c.get(url).content.decode()  # the select offers AGENT:VERSION
    assert _call_ids(c.get(url, {"scenario": "live/x"})) == ["call-old"]
    assert _call_ids(c.get(url, {"language": "de"})) == ["call-old"]
    assert _call_ids(c.get(url, {"has_audio": "yes"})) == ["call-000123"]
    assert _call_ids(c.get(url, {"has_audio": "no"})) == ["call-old"]
    week_ago = (timezone.localdate() - dt.timedelta(days=7)).isoformat()
    assert _call_ids(c.get(url, {"started_from": week_ago})) == ["call-000123"]
    assert _call_ids(c.get(url, {"started_to": week_ago})) == ["call-old"]
    assert _call_ids(c.get(url, {"flagged_rule": "asking.one-question"})) == ["call-000123"]
    assert (
        _call_ids(c.get(url, {"flagged_rule": "opening.greet-by-name"})) == []
    )  # present but not flagged


def test_calls_list_shows_verdict_figures_and_ignores_bad_filters(as_role, call):
    response = as_role("lead").get(reverse("transcript-list"), {"started_from": "not-a-date"})
    assert response.status_code == 200
    assert "started_from" in response.context["form"].errors
    row = response.context["page"].rows[0]
    assert (row.turns, row.verdicts, row.flagged, row.errored, row.duration_ms) == (
        5,
        4,
        2,
        1,
        9500,
    )


def test_calls_list_pages_without_counting_every_page(as_role, django_assert_max_num_queries):
    av = AgentVersionFactory()
    for i in range(120):
        TranscriptFactory(
            external_id=f"bulk-{i:04d}",
            agent_version=av,
            started_at=timezone.now() - dt.timedelta(minutes=i),
        )
    c = as_role("reviewer")
    with django_assert_max_num_queries(14):
        first = c.get(reverse("transcript-list"))
    page = first.context["page"]
    assert _call_ids(first)[:2] == ["bulk-0000", "bulk-0001"]  # newest first
    assert page.has_next and not page.has_previous and page.total == 120
    third = c.get(reverse("transcript-list"), {"page": 3})
    assert _call_ids(third)[0] == "bulk-0100" and len(third.context["page"].rows) == 20
    assert not third.context["page"].has_next
    assert 'href="?page=2"' in third.content.decode()


def test_verdicts_list_filters(as_role, call):
    c = as_role("engineer")
    url = reverse("verdict-list")

    def rules(params):
        return sorted(v.rule_version.rule.rule_id for v in c.get(url, params).context["page"].rows)

    assert len(rules({})) == 4
    assert rules({"rule": "asking.one-question"}) == ["asking.one-question"]
    assert rules({"rule": "asking.one-question", "version": 1}) == []
    assert rules({"version": 2}) == ["asking.one-question"]
    assert rules({"flagged": "yes"}) == ["asking.one-question", "closing.wait-for-no"]
    assert rules({"errored": "yes"}) == ["boundaries.no-rubric-leak"]
    assert len(rules({"errored": "no"})) == 3
    assert rules({"judge": "nobody"}) == []
    assert len(rules({"judge": "gpt-4o-mini/conduct-v3", "transcript": "call-000123"})) == 4
    html = c.get(url, {"rule": "asking.one-question"}).content.decode()
    assert "/calls/call-000123/?turn=0#turn-0" in html  # links to the call at the cited turn


def test_verdicts_list_query_count_is_bounded(as_role, call, django_assert_max_num_queries):
    for _ in range(40):
        VerdictFactory()
    c = as_role("lead")
    with django_assert_max_num_queries(9):
        response = c.get(reverse("verdict-list"))
    assert len(response.context["page"].rows) == 44


def test_rules_list_groups_rules_with_latest_version_and_counts(as_role, call):
    response = as_role("reviewer").get(reverse("rule-list"))
    groups = dict(response.context["groups"])
    assert list(groups) == ["asking", "boundaries", "closing", "opening"]
    one_q = groups["asking"][0]
    assert (one_q.latest.number, one_q.latest.status, one_q.verdicts, one_q.flagged) == (
        2,
        "candidate",
        1,
        1,
    )
    leak = groups["boundaries"][0]
    assert leak.errored == 1 and leak.rule.safety
    assert b"safety" in response.content


def test_rules_list_query_count_is_bounded(as_role, call, django_assert_max_num_queries):
    for i in range(20):
        VerdictFactory(rule_version=RuleVersionFactory(rule=RuleFactory(group=f"g{i % 4}")))
    c = as_role("reviewer")
    with django_assert_max_num_queries(8):
        c.get(reverse("rule-list"))


def test_rule_page_lists_every_version_with_its_text_and_counts(as_role, call):
    from evals.rules.models import Rule

    rule = Rule.objects.get(rule_id="asking.one-question")
    RuleVersionFactory(
        rule=rule,
        number=1,
        text="Ask exactly one question.",
        status="gated",
        detector={"name": "multiple_questions", "max_questions": 1},
    )
    response = as_role("lead").get(reverse("rule-detail", args=["asking.one-question"]))
    versions = response.context["versions"]
    assert [v.version.number for v in versions] == [2, 1]
    assert (versions[0].verdicts, versions[0].flagged, versions[1].verdicts) == (1, 1, 0)
    html = response.content.decode()
    assert "Ask exactly one question." in html and "Ask one question per turn." in html
    assert "&quot;max_questions&quot;: 1" in html


# Dashboard -------------------------------------------------------------------------------------


def test_dashboard_figures_are_real(as_role, call):
    response = as_role("reviewer").get(reverse("dashboard"))
    f = response.context["figures"]
    assert (f["calls"], f["verdicts"], f["flagged"], f["errored"]) == (1, 4, 2, 1)
    assert f["flagged_rate"] == pytest.approx(2 / 3)
    assert f["rule_table"]["totals"]["rules"] == 4 and f["rule_table"]["totals"]["safety"] == 1
    assert f["agent_versions"][0]["calls"] == 1 and f["agent_versions"][0]["flagged"] == 2
    assert "66.7%" in response.content.decode()


@pytest.mark.parametrize(
    "role,panels",
    [
        ("reviewer", ["reviewer"]),
        ("engineer", ["engineer"]),
        ("lead", ["reviewer", "engineer", "lead"]),
    ],
)
def test_dashboard_shows_each_role_only_its_next_steps(as_role, role, panels):
    response = as_role(role).get(reverse("dashboard"))
    assert [p["role"] for p in response.context["panels"]] == panels
    html = response.content.decode()
    for other in {"reviewer", "engineer", "lead"} - set(panels):
        assert f'data-testid="next-{other}"' not in html


def test_heavy_figures_are_cached_until_the_data_changes(
    as_role, call, settings, django_assert_max_num_queries
):
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.DOCKET_FIGURES_CACHE_SECONDS = 60
    cache.clear()
    c = as_role("lead")
    with CaptureQueriesContext(connection) as cold:
        assert c.get(reverse("dashboard")).context["figures"]["verdicts"] == 4
    with CaptureQueriesContext(connection) as warm:
        assert c.get(reverse("dashboard")).context["figures"]["verdicts"] == 4
    assert len(warm.captured_queries) < len(cold.captured_queries)
    VerdictFactory(transcript=call, flagged=True, turn=1, turns=[1], severity="minor")
    figures = c.get(reverse("dashboard")).context["figures"]
    assert (figures["verdicts"], figures["flagged"]) == (5, 3)
    cache.clear()


@pytest.mark.parametrize(
    "name,params,expected",
    [
        ("transcript-list", {"has_audio": "yes"}, "call-000123"),
        ("verdict-list", {"flagged": "yes"}, "asking.one-question"),
    ],
)
def test_htmx_filter_request_gets_only_the_results_fragment(as_role, call, name, params, expected):
    c = as_role("reviewer")
    fragment = c.get(reverse(name), params, headers={"HX-Request": "true"})
    html = fragment.content.decode()
    assert html.lstrip().startswith('<div id="results"') and "<html" not in html
    assert expected in html
    assert "HX-Request" in fragment["Vary"]
    restore = c.get(
        reverse(name), params, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.content.decode()  # a history restore needs the whole page


def test_bad_filter_value_is_named_in_the_results(as_role, call):
    html = (
        as_role("reviewer")
        .get(reverse("transcript-list"), {"started_to": "31/31/2026"})
        .content.decode()
    )
    assert "Started to: Enter a valid date." in html
