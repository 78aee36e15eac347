"""Demo steps: the people, and a believable past week of their work (load_demo steps).

- users: the demo logins (reviewers priya, sam and noor; engineer marco; lead lena; admin).
- detectors: the detector rules run over the demo calls through the judge runner (free, no LLM).
- review history: a daily sample for each past day of demo calls, every sampled call reviewed by one
  reviewer (about one in five by two), marks that follow demo/truth.json with a little seeded
  reviewer noise, so calibration has figures, kappa has pairs and a lead has a few ties to settle.
- issue rows: what the reviewers found on past days (truth.json), some triaged each way out.

Today's sample (console/demo_sample.py) is left alone: the newcomer reviews it. Every step is
idempotent: it does nothing when its work is already in the database.
"""

import logging
import random
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.utils import timezone

from console.demo_data import DEMO_AGENT, demo_truth
from evals.catalog.models import Transcript
from evals.judging.models import Judge, Verdict
from evals.judging.services.runs import judge_run_create, judge_run_item_execute
from evals.rules.models import Rule, RuleVersion
from labeling.models import Assignment, DailySample, IssueRow, IssueRowEvent, Mark, SampleItem
from labeling.services.issue_rows import issue_row_create
from labeling.services.marks import NOTE_MAX
from labeling.services.queue import assignment_finish
from labeling.services.sampling import daily_sample_make
from labeling.services.triage import (
    issue_row_fix_rule,
    issue_row_link_signal,
    issue_row_mark_duplicate,
    issue_row_write_rule,
)

DEMO_PASSWORD = "docket-demo"
DEMO_USERS = [
    ("priya", "reviewer"),
    ("sam", "reviewer"),
    ("noor", "reviewer"),
    ("marco", "engineer"),
    ("lena", "lead"),
]
# How often each reviewer marks a verdict the other way from the truth (seeded, so the same each
# load): on a verdict the judge got wrong (truth.json) they often go along with the judge; on a
# right flag they now and then call it wrong; on a clean call the judge passed, and on safety rules,
# never.
MISS_JUDGE_ERROR = {"priya": 0.15, "sam": 0.25, "noor": 0.35}
DOUBT_RIGHT_FLAG = {"priya": 0.06, "sam": 0.1, "noor": 0.14}
PAST_SAMPLE_SIZE = 12
SECOND_REVIEW_SHARE = 0.2
HISTORY_SEED = "docket-demo-history"
# Services that log one line per mark or claim: quiet while the history loads.
QUIET_LOGGERS = [
    "labeling.services.marks",
    "labeling.services.queue",
    "evals.judging.services.runs",
    "labeling.services.issue_rows",
    "labeling.services.triage",
    "labeling.services.sampling",
]


def _user(username: str):
    return get_user_model().objects.get(username=username)


def _local(day: date, hour: int, minute: int = 0) -> datetime:
    return timezone.make_aware(
        datetime.combine(day, time(hour, minute)), timezone.get_current_timezone()
    )


@contextmanager
def _quiet():
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


# ---- users -------------------------------------------------------------------------------------


def demo_users_ensure() -> int:
    """Create the demo users (password docket-demo) in
    their role groups; return how many were new."""
    User = get_user_model()
    # hashed once: the demo password is public, and each hash takes a good part of a second
    hashed = None
    created_count = 0
    for username, role, extra in [
        *((u, r, {}) for u, r in DEMO_USERS),
        ("admin", None, {"is_staff": True, "is_superuser": True}),
    ]:
        user, created = User.objects.get_or_create(username=username, defaults=extra)
        if created:
            hashed = hashed or make_password(DEMO_PASSWORD)
            user.password = hashed
            user.save(update_fields=["password"])
            created_count += 1
        if role:
            user.groups.add(Group.objects.get(name=role))
    return created_count


def demo_users_load(demo_dir: Path) -> str:
    new = demo_users_ensure()
    return f"{len(DEMO_USERS) + 1} demo users ({new} created)"


# ---- detectors ---------------------------------------------------------------------------------


def _demo_calls():
    return Transcript.objects.filter(agent_version__agent__name=DEMO_AGENT)


def demo_detectors_load(demo_dir: Path) -> str:
    """Run every detector rule over the demo calls, in this process, once."""
    calls = _demo_calls()
    have = Verdict.objects.filter(transcript__in=calls, judge__kind=Judge.Kind.DETECTOR)
    if have.exists():
        return f"detector verdicts already there ({have.count()})"
    with _quiet():
        run = judge_run_create(
            transcript_ids=list(calls.values_list("external_id", flat=True)),
            detectors_only=True,
            started_by="demo",
        )
        # Execute the items here, inside load_demo's transaction;
        # the queueing after commit finds none pending.
        for item_id in run.items.order_by("pk").values_list("pk", flat=True):
            judge_run_item_execute(item_id=item_id)
    run.refresh_from_db()
    made = Verdict.objects.filter(judge_run=run)
    return (
        f"detector rules run on {run.items.count()} calls: {made.count()} "
        f"verdicts, {made.filter(flagged=True).count()} flagged"
    )


# ---- review history ----------------------------------------------------------------------------


def demo_past_days(today: date | None = None) -> list[date]:
    """The sample days of the demo's past week: the day after each day with demo calls,
    before the latest day of calls (today's sample draws that one) and before today."""
    today = today or timezone.localdate()
    # The week's versions only: the archive of an earlier version was marked in a labelling
    # push (console/demo_loop.py), not sampled.
    calls = (
        _demo_calls()
        .filter(agent_version__version__in=demo_truth()["versions"])
        .exclude(scenario__startswith="golden/")
        .exclude(started_at__isnull=True)
    )
    days = sorted(
        {timezone.localtime(at).date() for at in calls.values_list("started_at", flat=True)}
    )
    if not days:
        return []
    return [d + timedelta(days=1) for d in days[:-1] if d + timedelta(days=1) < today]


def _mark_correct(
    truth: dict, key: str, verdict: Verdict, reviewer: str, rng: random.Random
) -> bool:
    """The reviewer's mark: the truth, now and then the other way (see MISS_JUDGE_ERROR)."""
    right = truth["verdicts"].get(
        key, True
    )  # detector verdicts match the planted signals (tests check it)
    if (right and not verdict.flagged) or verdict.rule_version.rule.safety:
        return right
    slip = DOUBT_RIGHT_FLAG[reviewer] if right else MISS_JUDGE_ERROR[reviewer]
    return (not right) if rng.random() < slip else right


def _review(
    *,
    item: SampleItem,
    reviewer,
    verdicts: list[Verdict],
    truth: dict,
    rng: random.Random,
    start: datetime,
) -> datetime:
    """Review one call as `reviewer` from `start`: an assignment,
    a mark on every verdict, finished; return the end.

    The marks are written in one insert (mark_set's rows: the reviewer's assignment, a one-line
    note; going through mark_set one by one made load_demo several seconds slower); the finish goes
    through assignment_finish, which refuses a call with a verdict left unmarked.
    """
    end = start + timedelta(minutes=rng.randint(4, 11), seconds=rng.randint(0, 59))
    assignment = Assignment.objects.create(
        item=item,
        reviewer=reviewer,
        claimed_at=start,
        lease_expires_at=timezone.now() + timedelta(hours=1),
    )
    marks = []
    for v in verdicts:
        key = f"{item.transcript.external_id}|{v.rule_version.rule.rule_id}|{v.rule_version.number}"
        correct = _mark_correct(truth, key, v, reviewer.username, rng)
        note = truth["errors"].get(key, "") if not correct else ""  # what a reviewer would write
        marks.append(
            Mark(
                verdict=v,
                reviewer=reviewer,
                correct=correct,
                note=note[:NOTE_MAX],
                assignment=assignment,
            )
        )
    Mark.objects.bulk_create(marks)
    assignment_finish(reviewer=reviewer, transcript=item.transcript)
    Assignment.objects.filter(pk=assignment.pk).update(
        finished_at=end, lease_expires_at=start + timedelta(minutes=45)
    )
    Mark.objects.filter(assignment=assignment).update(
        created_at=end - timedelta(seconds=30), updated_at=end
    )
    return end + timedelta(minutes=rng.randint(1, 6))


def demo_reviews_load(demo_dir: Path) -> str:
    """Make and review the past days' samples (skips a day whose sample already has reviews)."""
    truth = demo_truth(demo_dir)
    reviewers = [_user(name) for name in MISS_JUDGE_ERROR]
    recorded = set(_demo_calls().exclude(audio_url="").values_list("pk", flat=True))
    days = demo_past_days()
    made = reviewed = doubles = 0
    with _quiet():
        for day in days:
            existing = DailySample.objects.filter(day=day).first()
            if existing and Assignment.objects.filter(item__sample=existing).exists():
                continue
            sample, _ = daily_sample_make(day=day, size=PAST_SAMPLE_SIZE)
            made += 1
            DailySample.objects.filter(pk=sample.pk).update(created_at=_local(day, 6))
            sample.items.update(created_at=_local(day, 6))
            rng = random.Random(f"{HISTORY_SEED}:{day.isoformat()}")
            clock = {r.pk: _local(day, 9, rng.randint(0, 50)) for r in reviewers}
            items = list(sample.items.select_related("transcript").order_by("pk"))
            # A second opinion on about one call in five, first
            # on the calls where a rule not yet trusted flagged.
            doubtful = set(
                Verdict.objects.filter(
                    transcript_id__in=[i.transcript_id for i in items],
                    flagged=True,
                    error="",
                )
                .exclude(rule_version__status=RuleVersion.Status.GATED)
                .values_list("transcript_id", flat=True)
            )
            order = sorted(
                range(len(items)), key=lambda n: (items[n].transcript_id not in doubtful, n)
            )
            pick = random.Random(f"{HISTORY_SEED}:twice:{day.isoformat()}")
            first_pass = [n for n in order if items[n].transcript_id in doubtful]
            pick.shuffle(first_pass)
            rest = [n for n in order if items[n].transcript_id not in doubtful]
            twice = set((first_pass + rest)[: round(SECOND_REVIEW_SHARE * len(items))])
            for n, item in enumerate(items):
                # priya keeps the recorded calls for today: she
                # reviews them in the newcomer's first session.
                pool = [
                    r
                    for r in reviewers
                    if not (item.transcript_id in recorded and r.username == "priya")
                ]
                first = pool[n % len(pool)]
                chosen = [first]
                if n in twice:
                    chosen.append(rng.choice([r for r in pool if r != first]))
                    SampleItem.objects.filter(pk=item.pk).update(reviews_needed=2)
                    doubles += 1
                verdicts = list(
                    Verdict.objects.filter(transcript_id=item.transcript_id, error="")
                    .select_related("rule_version__rule")
                    .order_by("pk")
                )
                for reviewer in chosen:
                    clock[reviewer.pk] = _review(
                        item=item,
                        reviewer=reviewer,
                        verdicts=verdicts,
                        truth=truth,
                        rng=rng,
                        start=clock[reviewer.pk],
                    )
                    reviewed += 1
    marks = Mark.objects.filter(assignment__item__sample__day__in=days)
    return (
        f"{len(days)} past days ({made} sampled and reviewed now): {reviewed} reviews "
        f"({doubles} calls by two reviewers), {marks.count()} marks"
    )


# ---- issue rows --------------------------------------------------------------------------------

# label: (call, turn, what, severity, audio_only, reporter, filed n days after the call, at hour)
DEMO_ROWS = {
    "silence": (
        "call-000004",
        22,
        (
            "Over five seconds of silence before the agent answered; the candidate asked if "
            "the line had dropped."
        ),
        "minor",
        False,
        "sam",
        1,
        10,
    ),
    "silence-again": (
        "call-000004",
        22,
        "Long pause before the agent's reply at the end of the project section.",
        "minor",
        False,
        "noor",
        1,
        15,
    ),
    "hint": (
        "call-000015",
        8,
        (
            "The agent hinted at the answer (named the pattern the candidate was looking for). "
            "The judge passed the call on boundaries.no-hints."
        ),
        "major",
        False,
        "priya",
        1,
        11,
    ),
    "garbled": (
        "call-000022",
        15,
        ("The candidate's words at this turn are garbled in the transcript (low ASR confidence)."),
        "minor",
        False,
        "sam",
        1,
        13,
    ),
    "closing-silence": (
        "call-000026",
        22,
        "Long silence before the agent's closing question.",
        "minor",
        False,
        "sam",
        1,
        16,
    ),
    "talk-over": (
        "call-000028",
        24,
        "The agent started talking over the candidate's answer.",
        "minor",
        False,
        "noor",
        1,
        14,
    ),
    "talk-over-lost": (
        "call-000033",
        22,
        "Agent and candidate talk at the same time; half of the answer is lost.",
        "minor",
        False,
        "priya",
        1,
        10,
    ),
    "cut-off": (
        "call-000037",
        12,
        ("In the recording the agent's answer stops mid-sentence; the transcript shows it whole."),
        "major",
        True,
        "noor",
        0,
        16,
    ),
}


def _backdate_row(row: IssueRow, at: datetime) -> None:
    IssueRow.objects.filter(pk=row.pk).update(created_at=at, updated_at=at)
    IssueRowEvent.objects.filter(row=row).update(at=at)


def _backdate_triage(row: IssueRow, at: datetime) -> None:
    IssueRow.objects.filter(pk=row.pk).update(updated_at=at)
    IssueRowEvent.objects.filter(row=row).exclude(kind="filed").update(at=at)


def _rules_backdate() -> None:
    """The demo's rules were written before its first call, not when load_demo ran: so a
    version made from an issue row on a past day comes after version 1 on the rule page too."""
    first = (
        _demo_calls()
        .exclude(started_at__isnull=True)
        .order_by("started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    if first is None:
        return
    written = _local(timezone.localtime(first).date() - timedelta(days=1), 9)
    RuleVersion.objects.filter(source="rules.yaml", created_at__gt=written).update(
        created_at=written
    )
    Rule.objects.filter(versions__source="rules.yaml", created_at__gt=written).update(
        created_at=written
    )


def demo_issue_rows_load(demo_dir: Path) -> str:
    """File the reviewers' rows on past days and triage some of them as marco (once)."""
    names = [name for name, role in DEMO_USERS if role == "reviewer"]
    _rules_backdate()
    if IssueRow.objects.filter(reporter__username__in=names).exists():
        return f"issue rows already there ({IssueRow.objects.count()})"
    calls = {
        t.external_id: t
        for t in _demo_calls().filter(external_id__in={r[0] for r in DEMO_ROWS.values()})
    }
    if len(calls) < len({r[0] for r in DEMO_ROWS.values()}):
        return "issue rows skipped: some demo calls are missing"
    plan = []
    for label, (
        external_id,
        turn,
        what,
        severity,
        audio_only,
        reporter,
        after,
        hour,
    ) in DEMO_ROWS.items():
        call = calls[external_id]
        filed = _local(timezone.localtime(call.started_at).date() + timedelta(days=after), hour, 20)
        plan.append((filed, label, call, turn, what, severity, audio_only, reporter))
    plan.sort(key=lambda p: (p[0], p[1]))  # numbered in the order they were filed
    rows: dict[str, tuple[IssueRow, datetime]] = {}
    with _quiet():
        for filed, label, call, turn, what, severity, audio_only, reporter in plan:
            row = issue_row_create(
                reporter=_user(reporter),
                transcript=call,
                turn=turn,
                what=what,
                severity=severity,
                audio_only=audio_only,
            )
            _backdate_row(row, filed)
            rows[label] = (row, filed)
        marco = _user("marco")

        # Way 2: the long silence is what signals.no-long-silence measures.
        row, at = rows["silence"]
        issue_row_link_signal(
            row=row, actor=marco, rule=Rule.objects.get(rule_id="signals.no-long-silence")
        )
        _backdate_triage(row, at + timedelta(hours=3))
        # Way 3: the judge missed a subtle hint; the rule text gets explicit about it (version 2).
        row, at = rows["hint"]
        hints = Rule.objects.get(rule_id="boundaries.no-hints")
        v1 = hints.versions.order_by("number").first()
        issue_row_fix_rule(
            row=row,
            actor=marco,
            rule=hints,
            text=(
                v1.text.strip() + " This includes subtle hints: naming the concept, "
                "pattern or tool the candidate is searching for, or "
                "confirming which of their guesses is on the right track."
            ),
        )
        _backdate_triage(row, at + timedelta(hours=4))
        hints.versions.filter(number__gt=1).update(created_at=at + timedelta(hours=4))
        # A second report of the long silence in call-000004 is a duplicate of the first.
        row, at = rows["silence-again"]
        first, _ = rows["silence"]
        issue_row_mark_duplicate(
            row=row, actor=marco, of=first, reason="Same pause, reported twice."
        )
        _backdate_triage(row, at + timedelta(hours=1))
        # Way 1: the cut-off is heard only in the recording; no rule covers it yet, so a draft rule.
        row, at = rows["cut-off"]
        version = issue_row_write_rule(
            row=row,
            actor=marco,
            rule_id="audio.no-cut-off",
            group="audio",
            text="Every agent answer is heard to its end in "
            "the recording: none stops mid-sentence.",
            severity="major",
        )
        _backdate_triage(row, at + timedelta(hours=1))
        type(version).objects.filter(pk=version.pk).update(created_at=at + timedelta(hours=1))
        Rule.objects.filter(pk=version.rule_id).update(created_at=at + timedelta(hours=1))
    counts = {o: IssueRow.objects.filter(outcome=o).count() for o in IssueRow.Outcome.values}
    return (
        f"{len(rows)} issue rows filed; triaged: {counts['new_signal']} add a "
        f"signal, {counts['rule_fix']} fix the rule, {counts['new_rule']} "
        f"write a rule, {counts['duplicate']} duplicate; {counts['']} left new"
    )
