import pytest
from django.urls import reverse
from django.utils import timezone

from labeling.models import IssueRow, Mark
from tests.factories import (
    DailySampleFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
    logged_in,
    token_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def call():
    t = TranscriptFactory(external_id="call-000123", audio_url="/static/x.ogg")
    TurnFactory(
        transcript=t,
        index=0,
        speaker="agent",
        text="Hi Dana, thanks for joining.",
        phase="opening",
        start_ms=0,
        end_ms=4000,
    )
    TurnFactory(
        transcript=t,
        index=1,
        speaker="user",
        text="Hi!",
        phase="opening",
        start_ms=4000,
        end_ms=5000,
    )
    TurnFactory(transcript=t, index=2, speaker="tool", text='{"slot": "ok"}', phase="asking")
    rv = RuleVersionFactory(rule__rule_id="asking.one-question", text="Ask one question per turn.")
    VerdictFactory(
        transcript=t,
        rule_version=rv,
        flagged=True,
        turn=0,
        turns=[0],
        severity="major",
        rationale="Asked two questions.",
    )
    VerdictFactory(transcript=t, flagged=False, rationale="Greeted by name.")
    VerdictFactory(transcript=t, flagged=False, error="judge timeout")
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=t)
    return t


def test_start_reviewing_claims_and_opens_the_call(client, reviewer, call):
    logged_in(client, reviewer)
    home = client.get(reverse("review"))
    assert b"Start reviewing" in home.content and b'href="/review/"' in home.content
    response = client.post(reverse("review-next"))
    assert response.status_code == 302 and response.url == reverse(
        "review-call", args=["call-000123"]
    )
    page = client.get(response.url)
    html = page.content.decode()
    assert (
        'id="player" data-player' in html
        and 'id="turn-0"' in html
        and 'data-start-ms="4000"' in html
    )
    assert "Asked two questions." in html and "Ask one question per turn." in html
    assert "speaker-user" in html and "<details" in html and "phase-mark" in html
    assert html.count(">Judge right</button>") == 2  # the errored verdict has no buttons
    assert "0</strong> of 2 verdicts marked" in html and "disabled" in html


def test_a_call_not_held_redirects(client, reviewer, call):
    logged_in(client, reviewer)
    response = client.get(reverse("review-call", args=["call-000123"]))
    assert response.status_code == 302


def test_mark_through_htmx_returns_the_verdict_fragment_and_can_change(client, reviewer, call):
    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    v = call.verdicts.get(flagged=True)
    url = reverse("review-mark", args=["call-000123", v.pk])
    r = client.post(
        url, {"correct": "0", "note": "asked one, with a clarifier"}, HTTP_HX_REQUEST="true"
    )
    html = r.content.decode()
    assert r.status_code == 200 and html.lstrip().startswith(f'<article id="verdict-{v.pk}"')
    assert "Saved" in html and "marked-wrong" in html and "asked one, with a clarifier" in html
    assert "marks-changed" in r["HX-Trigger"]
    r = client.post(url, {"correct": "1"}, HTTP_HX_REQUEST="true")
    mark = Mark.objects.get(verdict=v, reviewer=reviewer)
    assert mark.correct and mark.note == "" and "marked-right" in r.content.decode()
    client.post(reverse("review-unmark", args=["call-000123", v.pk]), HTTP_HX_REQUEST="true")
    assert not Mark.objects.exists()


def test_finish_needs_every_mark_then_opens_the_next_call(client, reviewer, call):
    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    other = TranscriptFactory(external_id="call-000124")
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=other)
    r = client.post(reverse("review-finish", args=["call-000123"]), follow=True)
    assert b"2 verdicts without your mark" in r.content
    for v in call.verdicts.filter(error=""):
        client.post(reverse("review-mark", args=["call-000123", v.pk]), {"correct": "1"})
    progress = client.get(
        reverse("review-call-progress", args=["call-000123"]), HTTP_HX_REQUEST="true"
    )
    assert b"2</strong> of 2" in progress.content and b"disabled" not in progress.content
    r = client.post(reverse("review-finish", args=["call-000123"]))
    assert r.url == reverse("review-call", args=["call-000124"])
    # Back to the finished call: marks still changeable.
    home = client.get(reverse("review"))
    assert b"call-000123" in home.content
    page = client.get(reverse("review-call", args=["call-000123"]))
    assert b"Next call" in page.content


def test_file_an_issue_row_via_htmx(client, reviewer, call):
    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    url = reverse("review-issue", args=["call-000123"])
    r = client.post(
        url,
        {"turn": "1", "what": "talks over candidate", "severity": "major", "audio_only": "on"},
        HTTP_HX_REQUEST="true",
    )
    row = IssueRow.objects.get()
    assert (row.number, row.turn, row.audio_only, row.severity) == (1, 1, True, "major")
    assert b"Filed row 1" in r.content and "issue-filed" in r["HX-Trigger"]
    r = client.post(url, {"turn": "9", "what": "x", "severity": "minor"}, HTTP_HX_REQUEST="true")
    assert b"no turn 9" in r.content and IssueRow.objects.count() == 1


def test_reviewers_never_see_each_others_marks(client, make_user, call):
    from labeling.services.marks import mark_set

    other = make_user("reviewer")
    mark_set(
        reviewer=other, verdict=call.verdicts.get(flagged=True), correct=False, note="SECRET-NOTE"
    )
    me = make_user("reviewer")
    logged_in(client, me)
    client.post(reverse("review-next"))
    html = client.get(reverse("review-call", args=["call-000123"])).content.decode()
    assert "SECRET-NOTE" not in html
    assert " marked-wrong" not in html and " marked-right" not in html
    assert 'class="mark-wrong" aria-pressed="true"' not in html


def test_leads_make_the_sample_and_queue_a_call_by_hand(client, lead, reviewer):
    TranscriptFactory(external_id="call-9")
    logged_in(client, reviewer)
    assert client.post(reverse("review-sample-make")).status_code == 403
    logged_in(client, lead)
    assert b"Make today's sample" in client.get(reverse("review")).content
    client.post(reverse("review-sample-make"))
    r = client.post(
        reverse("review-sample-queue"), {"transcript": "call-9", "next": "//evil.example/"}
    )
    assert r.url == reverse("review")
    r = client.post(
        reverse("review-sample-queue"), {"transcript": "call-9", "next": "/calls/call-9/"}
    )
    assert r.url == "/calls/call-9/"
    r = client.post(reverse("review-sample-queue"), {"transcript": "call-9"}, follow=True)
    assert b"call-9 is in today" in r.content
    r = client.post(reverse("review-sample-queue"), {"transcript": "call-nope"}, follow=True)
    assert b"no call with id" in r.content
    from labeling.models import SampleItem

    item = SampleItem.objects.get(transcript__external_id="call-9")
    assert item.reason in ("manual", "uniform") and item.sample.day == timezone.localdate()


def test_a_lapsed_hold_is_said_plainly_and_marks_still_save(client, reviewer, call):
    from datetime import timedelta

    from labeling.models import Assignment

    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    Assignment.objects.update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    html = client.get(reverse("review-call", args=["call-000123"])).content.decode()
    assert "Your hold on this call lapsed" in html
    v = call.verdicts.get(flagged=True)
    client.post(
        reverse("review-mark", args=["call-000123", v.pk]), {"correct": "1"}, HTTP_HX_REQUEST="true"
    )
    assert Mark.objects.get(verdict=v).assignment is not None
    assert (
        "Your hold on this call lapsed"
        not in client.get(reverse("review-call", args=["call-000123"])).content.decode()
    )


def test_an_issue_row_names_a_range_of_the_recording(client, reviewer, call):
    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    page = client.get(reverse("review-call", args=["call-000123"])).content.decode()
    # The timeline: one bar per timed agent or user turn, as long as the call's last turn.
    assert 'data-duration-ms="5000"' in page and page.count('class="tl-agent') == 1
    assert 'id="issue-from"' in page and 'id="issue-to"' in page
    url = reverse("review-issue", args=["call-000123"])
    htmx = {"HX-Request": "true"}
    form = {"what": "Talks over the user", "severity": "major", "audio_only": "on"}
    bad = client.post(url, {**form, "from": "0:04.5", "to": "1:7x"}, headers=htmx)
    assert "to: &#x27;1:7x&#x27; is not a time like 1:05 or 65." in bad.content.decode()
    assert 'value="0:04.5"' in bad.content.decode()  # what was typed stays in the form
    backwards = client.post(url, {**form, "from": "0:04", "to": "0:03"}, headers=htmx)
    assert "to: The range must end after it starts (4000–3000 ms)." in backwards.content.decode()
    half = client.post(url, {**form, "from": "4"}, headers=htmx)
    assert "to: Give both ends." in half.content.decode()
    assert not IssueRow.objects.exists()
    ok = client.post(url, {**form, "from": "0:04.5", "to": "4.9"}, headers=htmx)
    assert "Filed row 1" in ok.content.decode() and "0:04–0:04" in ok.content.decode()
    row = IssueRow.objects.get()
    # No turn typed: the turn spoken at the range's start.
    assert (row.start_ms, row.end_ms, row.turn, row.audio_only) == (4500, 4900, 1, True)


def test_the_api_takes_a_range_too(reviewer, call):
    api = token_client(reviewer)
    body = {"transcript": "call-000123", "what": "Long pause", "severity": "minor"}
    r = api.post("/api/v1/issue-rows/", {**body, "start_ms": 100, "end_ms": 2000}, format="json")
    assert r.status_code == 201 and (r.json()["start_ms"], r.json()["turn"]) == (100, 0)
    bad = api.post("/api/v1/issue-rows/", {**body, "start_ms": 100}, format="json")
    assert bad.status_code == 400
    assert bad.json()["errors"] == [
        {"field": "end_ms", "message": "Give both ends.", "code": "invalid"}
    ]
