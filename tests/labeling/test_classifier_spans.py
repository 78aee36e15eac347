"""The classifier spans behind the thresholds pages stay equal to a count of the verdicts after
every kind of write (imports, marks, settlements, categories, calls, deletes), and --check
catches a tampered row."""

import datetime as dt
import json
from collections import Counter

import pytest
from django.core.management import call_command

from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.classifiers.models import VerdictCategory
from evals.classifiers.services import classifier_logs_import, classifier_rules_ensure
from evals.judging.models import Judge, Verdict
from evals.rules.models import RuleVersion
from labeling.models import ClassifierSpan, Mark, Settlement
from labeling.selectors import classifier_thresholds as sel
from labeling.services.classifier_spans import (
    classifier_spans_differences,
    spans_covering,
)
from labeling.services.tally import verdict_tally_rebuild
from tests import factories as f
from tests.evals.import_helpers import call

DAY0 = dt.datetime(2026, 9, 1, 10, tzinfo=dt.UTC)
WINDOWS = [
    (None, None),
    (dt.date(2026, 9, 1), dt.date(2026, 9, 1)),
    (dt.date(2026, 8, 20), dt.date(2026, 9, 3)),
    (dt.date(2026, 9, 2), dt.date(2026, 11, 29)),
    (dt.date(2025, 12, 1), dt.date(2026, 12, 1)),
]


def counted(rows) -> Counter:
    """The rows' counts by what the figures read (the spans keep a confidence's bin only where
    the curve does not read it: Item.counted)."""
    out = Counter()
    for r in rows:
        item = r.item.counted()
        out[item.flagged, item.confidence, item.positive, r.tenant, r.agent] += item.n
    return out


def assert_spans_right():
    assert classifier_spans_differences() == 0
    assert sel.classifier_checks() == sel.verdict_checks()
    for rule in sel.CLASSIFIER_RULES:
        for since, until in WINDOWS:
            for extra in ({}, {"tenant": "acme"}, {"category": "instruction_override"}):
                spans, categories = sel.classifier_rows(
                    rule_id=rule, since=since, until=until, **extra
                )
                args = (rule, None, extra.get("tenant", ""), "", extra.get("category", ""))
                direct, direct_categories = sel.verdict_rows(*args, since, until)
                assert counted(spans) == counted(direct), (rule, since, until, extra)
                figures = [sel._group("all", "", r, 0.9).as_dict() for r in (spans, direct)]
                assert figures[0] == figures[1], (rule, since, until, extra)
                assert categories == direct_categories, (rule, since, until, extra)


@pytest.fixture
def calls(db):
    classifier_rules_ensure()
    transcripts_import(
        lines=[
            call(f"call-{i}", tenant=("acme", "globex")[i % 2], started_at=DAY0.isoformat())
            for i in range(6)
        ],
        source="calls.jsonl",
    )
    for i, t in enumerate(Transcript.objects.order_by("external_id")):
        t.started_at = DAY0 + dt.timedelta(days=3 * i - 5, hours=i * 5)
        t.save(update_fields=["started_at"])


def log(i: int, **kw) -> str:
    line = {
        "event": "agent.injection_classifier.verdict",
        "verdict": i % 3 > 0,
        "confidence": 50 + 7 * i,
        "category": "instruction_override" if i % 2 else "",
        "tenant": ("acme", "globex")[i % 2],
        "call": f"call-{i}",
        "turn": 1,
    }
    return json.dumps({**line, **kw})


@pytest.mark.django_db
@pytest.mark.postgres
def test_every_kind_of_write_keeps_the_spans_equal_to_a_count_of_the_verdicts(calls, make_user):
    assert ClassifierSpan.objects.count() == 0
    reviewers = [make_user("reviewer") for _ in range(3)]
    lead = make_user("lead")
    # A platform's log lines, imported in bulk (COPY).
    lines = [log(i) for i in range(6)]
    lines += [
        log(i, event="agent.ai_frustration.verdict", verdict="situation", target="situation")
        for i in range(3)
    ]
    assert classifier_logs_import(lines=lines, source="logs.jsonl").created == 9
    assert ClassifierSpan.objects.exists()
    assert_spans_right()
    # One at a time through the ORM, with an errored one left out.
    rv = RuleVersion.objects.get(rule__rule_id="classifiers.scope-drift")
    judge = Judge.objects.create(name="platform/drift", kind=Judge.Kind.CLASSIFIER)
    made = [
        Verdict.objects.create(
            transcript=t, rule_version=rv, judge=judge, flagged=False, confidence=None
        )
        for t in Transcript.objects.all()[:3]
    ]
    made[2].error = "timeout"
    made[2].save()
    assert_spans_right()
    # Marks, agreeing and not, then a settlement and undone marks: the truth moves.
    injection = list(Verdict.objects.filter(rule_version__rule__rule_id="classifiers.injection"))
    for v in injection[:4]:
        Mark.objects.create(verdict=v, reviewer=reviewers[0], correct=True)
    Mark.objects.create(verdict=injection[0], reviewer=reviewers[1], correct=False)
    assert_spans_right()
    Settlement.objects.create(verdict=injection[0], correct=False, settled_by=lead)
    Mark.objects.filter(verdict=injection[3]).delete()
    Mark.objects.filter(verdict=injection[1]).update(correct=False)
    assert_spans_right()
    # Categories given, changed and taken away.
    VerdictCategory.objects.create(verdict=made[0], category="off_topic")
    VerdictCategory.objects.filter(verdict=injection[1]).update(category="persona_switch")
    VerdictCategory.objects.filter(verdict=injection[3]).delete()
    assert_spans_right()
    # The verdict changes: flagged, confidence, errored or no longer.
    Verdict.objects.filter(pk=injection[2].pk).update(flagged=False, turn=None, confidence=3)
    Verdict.objects.filter(pk=made[2].pk).update(error="")
    Verdict.objects.filter(pk=made[1].pk).update(error="refused")
    assert_spans_right()
    # A marked verdict errs, then no longer: its tally row is recounted in the same statement.
    Verdict.objects.filter(pk=injection[1].pk).update(error="refused", flagged=False, turn=None)
    assert_spans_right()
    Verdict.objects.filter(pk=injection[1].pk).update(error="")
    assert_spans_right()
    # The call moves to another day, tenant and agent version.
    Transcript.objects.filter(pk=injection[0].transcript_id).update(
        started_at=DAY0 + dt.timedelta(days=40), tenant="initech"
    )
    Transcript.objects.filter(pk=injection[1].transcript_id).update(
        started_at=None, agent_version=f.AgentVersionFactory()
    )
    assert_spans_right()
    # The tally rebuilt (it truncates), then verdicts and whole calls deleted.
    verdict_tally_rebuild()
    assert_spans_right()
    injection[2].delete()
    Transcript.objects.get(pk=injection[0].transcript_id).delete()
    assert_spans_right()


@pytest.mark.django_db
@pytest.mark.postgres
def test_check_catches_a_tampered_row_and_rebuild_repairs_it(calls, capsys):
    classifier_logs_import(lines=[log(i) for i in range(6)], source="logs.jsonl")
    before = sel.classifier_thresholds(rule_id="classifiers.injection")["all"].verdicts
    row = ClassifierSpan.objects.filter(level=4).first()
    ClassifierSpan.objects.filter(pk=row.pk).update(n=row.n + 5)
    assert classifier_spans_differences() == 1
    # The pages read the spans: the tampered count shows.
    assert sel.classifier_thresholds(rule_id="classifiers.injection")["all"].verdicts == before + 5
    with pytest.raises(SystemExit):
        call_command("classifier_spans_rebuild", "--check")
    assert "1 rows differ" in capsys.readouterr().out
    call_command("classifier_spans_rebuild")
    call_command("classifier_spans_rebuild", "--check")
    assert "0 rows differ" in capsys.readouterr().out
    assert sel.classifier_thresholds(rule_id="classifiers.injection")["all"].verdicts == before


@pytest.mark.django_db
@pytest.mark.postgres
def test_unmarked_verdicts_count_in_a_row_per_histogram_bin_not_per_confidence(calls, reviewer):
    """However many distinct confidences come in, the verdicts not both flagged and marked fill
    at most a row per bin of a span; a marked flagged verdict keeps its own, for the curve."""
    rv = RuleVersion.objects.get(rule__rule_id="classifiers.injection")
    judge = Judge.objects.create(name="platform/injection", kind=Judge.Kind.CLASSIFIER)
    av = f.AgentVersionFactory()
    Verdict.objects.bulk_create(
        Verdict(
            transcript=Transcript.objects.create(
                external_id=f"many-{c}",
                checksum=f"{c + 500:064x}",
                started_at=DAY0,
                agent_version=av,
            ),
            rule_version=rv,
            judge=judge,
            flagged=c % 2 == 0,
            confidence=c,
        )
        for c in range(101)
    )
    every = ClassifierSpan.objects.filter(level=4)
    assert sorted(set(every.values_list("confidence", flat=True))) == list(range(0, 100, 10))
    assert every.count() == 2 * 10  # flagged or not, by bin
    v = Verdict.objects.get(confidence=37)
    assert v.flagged is False
    Verdict.objects.filter(pk=v.pk).update(flagged=True)
    Mark.objects.create(verdict=v, reviewer=reviewer, correct=True)
    assert every.filter(confidence=37, truth=1).get().n == 1
    assert_spans_right()


@pytest.mark.parametrize(
    ("since", "until"),
    [
        (dt.date(2026, 9, 1), dt.date(2026, 9, 1)),
        (dt.date(2026, 6, 3), dt.date(2026, 8, 31)),
        (dt.date(1999, 12, 31), dt.date(2026, 12, 2)),
    ],
)
def test_a_window_is_covered_by_few_spans_exactly(since, until):
    covering = spans_covering(since, until)
    days = []
    for level, start in covering:
        assert start % 4**level == 0
        days += range(start, start + 4**level)
    epoch = dt.date(1970, 1, 1)
    assert days == list(range((since - epoch).days, (until - epoch).days + 1))
    assert len(covering) <= 2 * 3 * 3 + (until - since).days // 64
