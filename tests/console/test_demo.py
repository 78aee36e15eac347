"""The demo data and `manage.py load_demo`: what a newcomer sees after `make run`."""

import importlib.util
import json
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Count, Q
from django.utils import timezone

from console.demo import DEMO_STEPS, DemoStep, demo_load
from console.demo_data import DEMO_DIR
from console.demo_history import DEMO_USERS, demo_past_days
from evals.catalog.models import AgentVersion, Transcript, Turn
from evals.conversation.models import ConversationScore
from evals.evalruns.models import EvalRun
from evals.judging.models import Judge, JudgeRun, Verdict
from evals.rules.detectors import detector_run, turn_views
from evals.rules.models import Rule, RuleVersion
from labeling.models import (
    Assignment,
    DailySample,
    IssueRow,
    IssueRowEvent,
    Mark,
    SampleItem,
    Settlement,
)
from labeling.selectors.calibration import (
    calibration_overall,
    calibration_row,
    calibration_rows,
    disagreements,
)

V_ARCHIVE, V_OLD, V_NEW = "2026-11-07.1", "2026-11-21.1", "2026-11-28.1"
PHASES = ["opening", "background", "project", "candidate-questions", "closing"]


def ogg_opus_duration_ms(path: Path) -> int:
    """Return an Ogg/Opus file's length: the last page's
    granule position less the pre-skip, at 48 kHz."""
    data = path.read_bytes()
    assert data[:4] == b"OggS", f"{path} is not an Ogg file"
    head = data.find(b"OpusHead")
    assert head > 0, f"{path} has no Opus stream"
    pre_skip = int.from_bytes(data[head + 10 : head + 12], "little")
    last_page = data.rfind(b"OggS")
    granule = int.from_bytes(data[last_page + 6 : last_page + 14], "little")
    return round((granule - pre_skip) / 48)


def load(**kwargs) -> str:
    out = StringIO()
    call_command("load_demo", stdout=out, **kwargs)
    return out.getvalue()


def table_counts() -> dict[str, int]:
    models = (
        AgentVersion,
        Transcript,
        Turn,
        Rule,
        RuleVersion,
        Judge,
        Verdict,
        JudgeRun,
        get_user_model(),
        DailySample,
        SampleItem,
        Assignment,
        Mark,
        Settlement,
        IssueRow,
        IssueRowEvent,
        ConversationScore,
    )
    return {m.__name__: m.objects.count() for m in models}


def truth_file() -> dict:
    return json.loads((DEMO_DIR / "truth.json").read_text())


@pytest.fixture
def truth():
    return truth_file()


@pytest.mark.django_db
def test_load_demo_loads_calls_rules_and_a_verdict_for_every_call_and_judged_rule():
    output = load()

    everything = Transcript.objects.filter(agent_version__agent__name="phone-screen")
    # The week's calls; the archive of an earlier version is checked apart below.
    calls = everything.filter(agent_version__version__in=[V_OLD, V_NEW])
    assert calls.count() >= 60
    phone_screen = AgentVersion.objects.filter(agent__name="phone-screen")
    assert set(phone_screen.values_list("version", flat=True)) == {V_ARCHIVE, V_OLD, V_NEW}
    # The booking agent's eval runs: finished from the judge cache, the second one regressed.
    runs = list(EvalRun.objects.order_by("pk"))
    assert [(r.status, r.rows_scored, r.regressed) for r in runs] == [
        ("done", 6, False),
        ("done", 6, True),
    ]
    assert runs[1].baseline_id == runs[0].pk and "tool_selection runs" in output
    # Judged rules: the demo's, not the draft a triager wrote from an issue row (no verdicts yet).
    # The conversation judge's checks are scored on the golden calls only (checked apart below).
    judged = (
        Rule.objects.filter(detector__isnull=True)
        .exclude(versions__status=RuleVersion.Status.DRAFT)
        .exclude(group="conversation")
    )
    assert 23 <= judged.count() <= 27
    assert set(judged.values_list("group", flat=True)) == {
        "opening",
        "asking",
        "acknowledging",
        "language",
        "requests",
        "boundaries",
        "closing",
    }
    assert sorted(Rule.objects.filter(safety=True).values_list("rule_id", flat=True)) == [
        "boundaries.no-bias",
        "boundaries.no-instruction-leak",
        "boundaries.no-rubric-leak",
    ]
    assert Rule.objects.filter(group="signals", detector__isnull=False).count() >= 2
    # The runtime classifiers' rules check their own demo calls (tests/console: classifiers).
    detectors = Rule.objects.filter(detector__isnull=False).exclude(group="classifiers")
    conduct = Verdict.objects.filter(transcript__in=calls).exclude(
        rule_version__rule__group="conversation"
    )
    per_call = calls.annotate(
        n=Count("verdicts", filter=~Q(verdicts__rule_version__rule__group="conversation"))
    ).values_list("n", flat=True)
    assert set(per_call) == {judged.count() + detectors.count()}
    conversation = Verdict.objects.filter(rule_version__rule__group="conversation")
    golden = calls.filter(scenario__startswith="golden/")
    assert conversation.count() == 2 * golden.count() == 2 * ConversationScore.objects.count()
    # Every (call, rule) pair exactly once; the detector
    # rules' verdicts come from their detector judges.
    detector_verdicts = Verdict.objects.filter(
        rule_version__rule__detector__isnull=False, transcript__in=calls
    ).exclude(rule_version__rule__group="classifiers")
    assert detector_verdicts.count() == calls.count() * detectors.count()
    assert set(detector_verdicts.values_list("judge__kind", flat=True)) == {Judge.Kind.DETECTOR}
    assert conduct.values("transcript", "rule_version").distinct().count() == calls.count() * (
        judged.count() + detectors.count()
    )
    assert Verdict.objects.filter(flagged=True).count() > 50
    assert Verdict.objects.filter(flagged=False).count() > 1000
    # The archive was judged on the labelling push's groups only, and the detectors ran on it.
    archive = everything.filter(agent_version__version=V_ARCHIVE)
    assert archive.count() >= 160
    pushed = truth_file()["archive"]["labelled_groups"]
    assert set(
        Verdict.objects.filter(transcript__in=archive, rule_version__rule__detector__isnull=True)
        .values_list("rule_version__rule__group", flat=True)
        .distinct()
    ) == set(pushed) - {"signals"}
    assert (
        Verdict.objects.filter(transcript__in=archive, rule_version__rule__in=detectors).count()
        == archive.count() * detectors.count()
    )
    assert f"{everything.count()} calls" in output
    assert f"{Verdict.objects.filter(transcript__in=everything).count()} verdicts" in output
    for step in DEMO_STEPS[:3]:
        assert f"{step.name}: " in output


@pytest.mark.django_db
def test_load_demo_twice_changes_nothing():
    load()
    before = table_counts()
    checksums = dict(Transcript.objects.values_list("external_id", "checksum"))
    output = load()
    assert table_counts() == before
    assert dict(Transcript.objects.values_list("external_id", "checksum")) == checksums
    assert "0 created" in output


@pytest.mark.django_db
def test_demo_calls_follow_a_phone_screen():
    load()
    named = 0
    regular = Transcript.objects.filter(scenario="", agent_version__agent__name="phone-screen")
    regular = regular.select_related("agent_version").prefetch_related("turns")
    for call in regular:
        turns = list(call.turns.all())
        phases = [t.phase for t in turns]
        # Phases come in the order of a screen, each present.
        assert [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p] == PHASES, (
            call.external_id
        )
        assert turns[0].speaker == "agent"
        named += call.metadata["candidate"].split()[0] in turns[0].text
        assert all(t.start_ms is not None and t.end_ms > t.start_ms for t in turns)
        assert all(0 <= t.asr_confidence <= 1 for t in turns)
        # Started in the week before 2026-11-30 (the archive: the two weeks before it);
        # yesterday has calls for the daily sample.
        week = (
            ("2026-11-09", "2026-11-20")
            if call.agent_version.version == V_ARCHIVE
            else (
                "2026-11-22",
                "2026-11-29",
            )
        )
        assert week[0] <= call.started_at.date().isoformat() <= week[1]
    assert named >= 0.9 * len(regular)  # a few calls break opening.greet-by-name on purpose
    yesterday = Transcript.objects.filter(started_at__date="2026-11-29").count()
    assert yesterday >= 20
    companies = set(Transcript.objects.values_list("metadata__company", flat=True))
    assert len(companies) >= 4


@pytest.mark.django_db
def test_demo_audio_files_exist_and_the_last_turn_ends_with_the_sound():
    load()
    with_audio = Transcript.objects.exclude(audio_url="")
    assert with_audio.count() >= 5
    total = 0
    for call in with_audio:
        assert call.audio_url == f"/static/demo/audio/{call.external_id}.ogg"
        path = Path(settings.BASE_DIR) / "static" / call.audio_url.removeprefix("/static/")
        assert path.is_file(), path
        size = path.stat().st_size
        assert size < 300_000, f"{path} is {size} bytes"
        total += size
        last_end = max(call.turns.values_list("end_ms", flat=True))
        duration = ogg_opus_duration_ms(path)
        assert abs(duration - last_end) <= 1000, (call.external_id, duration, last_end)
    assert total < 3_000_000


@pytest.mark.django_db
def test_the_audio_only_problem_is_in_the_sound_not_in_the_words(truth):
    load()
    (problem,) = truth["audio_only"]
    call = Transcript.objects.get(external_id=problem["call"])
    assert call.audio_url

    def ms_per_word(turn):
        return (turn.end_ms - turn.start_ms) / len(turn.text.split())

    agent_turns = list(call.turns.filter(speaker="agent"))
    cut = next(t for t in agent_turns if t.index == problem["turn"])
    others = sorted(ms_per_word(t) for t in agent_turns if t.index != cut.index)
    # The recording stops halfway through the sentence the transcript shows whole.
    assert ms_per_word(cut) < 0.7 * others[len(others) // 2]
    assert cut.text.endswith((".", "?"))


@pytest.mark.django_db
def test_golden_scenarios_have_a_call_for_both_versions_and_only_the_new_one_breaks_a_safety_rule(
    truth,
):
    load()
    calls = Transcript.objects.filter(agent_version__agent__name="phone-screen")
    scenarios = sorted(set(calls.exclude(scenario="").values_list("scenario", flat=True)))
    assert len(scenarios) == 8 and all(s.startswith("golden/") for s in scenarios)
    for scenario in scenarios:
        versions = Transcript.objects.filter(scenario=scenario).values_list(
            "agent_version__version", flat=True
        )
        assert sorted(versions) == [V_OLD, V_NEW], scenario
    flagged_safety = Verdict.objects.filter(
        transcript__scenario__startswith="golden/", rule_version__rule__safety=True, flagged=True
    )
    assert not flagged_safety.filter(transcript__agent_version__version=V_OLD).exists()
    leak = flagged_safety.get(transcript__agent_version__version=V_NEW)
    assert leak.rule_version.rule.rule_id == "boundaries.no-rubric-leak"
    assert (leak.transcript.external_id, leak.turn) == (
        truth["gate"]["call"],
        truth["gate"]["turn"],
    )
    assert "scored" in leak.transcript.turns.get(index=leak.turn).text


@pytest.mark.django_db
def test_truth_names_every_verdict_and_some_are_wrong_in_both_directions(truth):
    load()
    keys = {
        f"{t}|{r}|{n}"
        for t, r, n in Verdict.objects.filter(rule_version__rule__detector__isnull=True)
        .exclude(rule_version__rule__group="conversation")  # demo_conversation.py's, apart
        .values_list(
            "transcript__external_id", "rule_version__rule__rule_id", "rule_version__number"
        )
    }
    assert keys == set(truth["verdicts"])
    wrong = [k for k, ok in truth["verdicts"].items() if not ok]
    assert set(wrong) == set(truth["errors"])
    assert 0.01 < len(wrong) / len(keys) < 0.1
    flagged = {
        f"{t}|{r}|1": f
        for t, r, f in Verdict.objects.values_list(
            "transcript__external_id", "rule_version__rule__rule_id", "flagged"
        )
    }
    assert {flagged[k] for k in wrong} == {True, False}  # false positives and misses
    assert not any(k.startswith("golden-") for k in wrong)  # the gate's evidence is right
    kinds = Counter(truth["errors"].values())
    assert kinds["judge flagged a clarifying follow-up as a second question"] >= 3
    # A false positive on the candidate's slang cites a candidate turn.
    slang = next(k for k, why in truth["errors"].items() if "candidate's slang" in why)
    call, rule, _ = slang.split("|")
    verdict = Verdict.objects.get(transcript__external_id=call, rule_version__rule__rule_id=rule)
    assert Turn.objects.get(transcript=verdict.transcript, index=verdict.turn).speaker == "user"


@pytest.mark.django_db
def test_detector_rules_find_the_signals_planted_in_the_calls(truth):
    load()
    specs = {r.rule_id: r.detector for r in Rule.objects.filter(detector__isnull=False)}
    kind_rule = {
        "long_silence": "signals.no-long-silence",
        "talk_over": "signals.no-talk-over",
        "low_asr": "signals.asr-confidence-floor",
    }
    planted = {(c, s["kind"]): s["turn"] for c, events in truth["signals"].items() for s in events}
    assert {kind for _, kind in planted} == set(kind_rule)
    for call in Transcript.objects.prefetch_related("turns"):
        views = turn_views(call.turns.all())
        for kind, rule_id in kind_rule.items():
            result = detector_run(specs[rule_id], views)
            expected = planted.get((call.external_id, kind))
            assert result.flagged == (expected is not None), (call.external_id, kind)
            if expected is not None:
                assert expected in result.turns


def test_rules_file_is_in_the_design_format():
    data = yaml.safe_load((DEMO_DIR / "rules.yaml").read_text())
    assert list(data) == ["rules"]
    for rule in data["rules"]:
        assert set(rule) <= {"id", "group", "text", "severity", "safety", "phase", "detector"}
        assert rule["id"].startswith(rule["group"] + ".")


def test_generator_reproduces_the_committed_files():
    spec = importlib.util.spec_from_file_location("demo_generate", DEMO_DIR / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    calls, verdicts, truth = generate.build(with_audio=False)
    assert (DEMO_DIR / "rules.yaml").read_text() == generate.rules_yaml()
    assert [
        json.loads(line) for line in (DEMO_DIR / "calls.jsonl").read_text().splitlines()
    ] == calls
    assert [
        json.loads(line) for line in (DEMO_DIR / "verdicts.jsonl").read_text().splitlines()
    ] == verdicts
    assert json.loads((DEMO_DIR / "truth.json").read_text()) == json.loads(json.dumps(truth))


@pytest.mark.django_db
def test_steps_run_in_order_and_a_failing_step_leaves_nothing(tmp_path):
    ran = []

    def broken(demo_dir):
        ran.append("broken")
        raise RuntimeError("step failed")

    steps = [*DEMO_STEPS[:1], DemoStep("broken", broken)]
    with pytest.raises(RuntimeError):
        demo_load(steps=steps, echo=ran.append)
    assert ran[0].startswith("rules: ") and ran[1] == "broken"
    assert Rule.objects.count() == 0


def _key(verdict) -> str:
    rv = verdict.rule_version
    return f"{verdict.transcript.external_id}|{rv.rule.rule_id}|{rv.number}"


@pytest.mark.django_db
def test_demo_users_are_made_by_load_demo_and_the_command_prints_the_logins():
    load()
    User = get_user_model()
    for username, role in DEMO_USERS:
        user = User.objects.get(username=username)
        assert user.check_password("docket-demo") and user.groups.filter(name=role).exists(), (
            username
        )
    assert sorted(u for u, r in DEMO_USERS if r == "reviewer") == ["noor", "priya", "sam"]
    assert User.objects.get(username="admin").is_superuser
    out = StringIO()
    call_command("demo_users", stdout=out)
    assert "sam      reviewer" in out.getvalue() and "lena     lead" in out.getvalue()
    assert User.objects.count() == len(DEMO_USERS) + 1


@pytest.mark.django_db
def test_past_week_is_reviewed_and_todays_sample_is_left_for_the_newcomer(truth):
    today_step = next(i for i, step in enumerate(DEMO_STEPS) if step.name == "daily sample")
    demo_load(steps=DEMO_STEPS[: today_step + 1])
    today = DailySample.objects.get()
    drawn_today = sorted(
        today.items.values_list(
            "transcript_id", "reason", "inclusion_probability", "reviews_needed"
        )
    )
    load()
    # Today's sample is as its own step drew it, and nobody has touched it.
    today.refresh_from_db()
    assert (
        sorted(
            today.items.values_list(
                "transcript_id", "reason", "inclusion_probability", "reviews_needed"
            )
        )
        == drawn_today
    )
    assert not Assignment.objects.filter(item__sample=today).exists()
    days = demo_past_days()
    assert len(days) >= 5 and all(d < today.day for d in days)
    assert set(DailySample.objects.exclude(pk=today.pk).values_list("day", flat=True)) == set(days)
    for item in SampleItem.objects.filter(sample__day__in=days).select_related("sample"):
        finished = item.assignments.filter(finished_at__isnull=False)
        assert finished.count() == item.reviews_needed, item
        assert {timezone.localtime(a.finished_at).date() for a in finished} == {item.sample.day}
        assert all(a.claimed_at < a.finished_at for a in finished)
    # The phone-screen week's marks (the classifiers' demo marks theirs outside the sample, and
    # the labelling push marked the archive outside it too: checked below).
    archive = truth["archive"]["calls"]
    marks = (
        Mark.objects.filter(verdict__transcript__agent_version__agent__name="phone-screen")
        .exclude(verdict__transcript__external_id__in=archive)
        .select_related(
            "verdict__transcript", "verdict__rule_version__rule", "assignment__item__sample"
        )
    )
    assert marks.count() > 1000
    assert all(
        m.assignment is not None
        and timezone.localtime(m.created_at).date() == m.assignment.item.sample.day
        for m in marks
    )
    # Marks follow truth.json, with a little reviewer noise.
    agree = sum(m.correct == truth["verdicts"].get(_key(m.verdict), True) for m in marks)
    assert 0.97 * marks.count() < agree < marks.count()
    wrong_noted = marks.filter(correct=False).exclude(note="")
    assert wrong_noted.exists() and all(
        m.note == truth["errors"][_key(m.verdict)] for m in wrong_noted
    )
    # The labelling push: outside the sample, one reviewer a call, each mark the truth.
    pushed = Mark.objects.filter(verdict__transcript__external_id__in=archive).select_related(
        "verdict__transcript", "verdict__rule_version__rule"
    )
    assert pushed.count() > 1000 and not pushed.filter(assignment__isnull=False).exists()
    assert all(m.correct == truth["verdicts"].get(_key(m.verdict), True) for m in pushed)
    assert set(pushed.values_list("verdict__rule_version__rule__group", flat=True)) == set(
        truth["archive"]["labelled_groups"]
    )
    # About one call in five has a second reviewer: kappa has pairs, and a lead has a tie to settle.
    doubles = SampleItem.objects.filter(sample__day__in=days, reviews_needed=2).count()
    assert 0.1 < doubles / SampleItem.objects.filter(sample__day__in=days).count() < 0.3
    overall = calibration_overall(calibration_rows())
    assert overall["pairs"] > 100 and overall["kappa"] is not None and 0 < overall["kappa"] < 1
    assert disagreements(only_ties=True).exists()
    assert get_user_model().objects.filter(marks__isnull=False).distinct().count() == 3
    # The newcomer (priya) can still claim today's calls, the recorded ones included.
    recorded = set(Transcript.objects.exclude(audio_url="").values_list("pk", flat=True))
    assert not Assignment.objects.filter(
        reviewer__username="priya", item__transcript_id__in=recorded
    ).exists()


@pytest.mark.django_db
def test_judged_and_detector_rules_have_calibration_figures_with_intervals():
    load()
    threshold = settings.DOCKET_MIN_MARKS
    for rule_id in (
        "asking.one-question",
        "signals.no-long-silence",
        "language.no-slang",
        "closing.thank-by-name",
    ):
        version = RuleVersion.objects.get(rule__rule_id=rule_id, number=1)
        row = calibration_row(rule_version=version).as_dict()
        if rule_id.startswith(("asking.", "signals.")):  # the labelling push's groups
            assert row["marked"] >= threshold, rule_id
        else:
            assert 30 <= row["marked"] < threshold, rule_id  # honest: not enough marks yet
        assert (
            row["precision"] is not None
            and row["precision_ci"][0] < row["precision"] <= row["precision_ci"][1]
        )
        assert row["recall"] is not None and row["recall_ci"] is not None
    one_question = calibration_row(
        rule_version=RuleVersion.objects.get(rule__rule_id="asking.one-question")
    ).as_dict()
    assert one_question["fp"] >= 3  # the judge's clarifying-follow-up mistakes show
    flagged = Verdict.objects.filter(judge__kind=Judge.Kind.DETECTOR, flagged=True)
    assert flagged.filter(rule_version__rule__rule_id="signals.no-talk-over").exists()


@pytest.mark.django_db
def test_issue_rows_from_past_days_are_triaged_each_way_and_a_rule_has_two_versions():
    load()
    rows = IssueRow.objects.all()
    assert rows.count() >= 6
    assert list(rows.order_by("number").values_list("created_at", flat=True)) == sorted(
        rows.values_list("created_at", flat=True)
    )
    assert all(timezone.localtime(r.created_at).date() < timezone.localdate() for r in rows)
    assert set(rows.values_list("reporter__username", flat=True)) <= {"priya", "sam", "noor"}
    outcomes = Counter(rows.values_list("outcome", flat=True))
    for outcome in ("new_rule", "new_signal", "rule_fix", "duplicate"):
        assert outcomes[outcome] == 1, outcome
    assert (
        outcomes[""] >= 2
        and not rows.filter(outcome="", status__in=["triaged", "resolved"]).exists()
    )
    cut = rows.get(transcript__external_id="call-000037")
    assert (
        cut.audio_only
        and cut.outcome == "new_rule"
        and cut.rule_version.status == RuleVersion.Status.DRAFT
    )
    signal = rows.get(outcome="new_signal")
    assert signal.rule.rule_id == "signals.no-long-silence"
    duplicate = rows.get(outcome="duplicate")
    assert duplicate.duplicate_of == signal and duplicate.status == "resolved"
    fix = rows.get(outcome="rule_fix")
    versions = list(fix.rule.versions.order_by("number"))
    assert fix.rule.rule_id == "boundaries.no-hints" and [v.number for v in versions] == [1, 2]
    assert versions[1] == fix.rule_version and versions[1].source == f"issue row {fix.number}"
    assert "subtle" in versions[1].text and versions[0].text.strip() in versions[1].text
    assert (
        versions[0].created_at < fix.created_at < versions[1].created_at
    )  # the rule page reads in order
    # The history of each triaged row says who did what.
    assert set(
        IssueRowEvent.objects.exclude(kind="filed").values_list("actor__username", flat=True)
    ) == {"marco"}


@pytest.mark.django_db
def test_second_load_changes_nothing_in_the_history():
    load()
    before = table_counts()
    marks = sorted(Mark.objects.values_list("verdict_id", "reviewer_id", "correct", "updated_at"))
    output = load()
    assert table_counts() == before
    assert (
        sorted(Mark.objects.values_list("verdict_id", "reviewer_id", "correct", "updated_at"))
        == marks
    )
    assert "1 changed since through an issue row" in output
    assert RuleVersion.objects.filter(rule__rule_id="boundaries.no-hints").count() == 2


@pytest.mark.django_db
def test_demo_conversation_judge_scores_both_versions_and_the_newer_drifts(truth):
    load()
    scores = ConversationScore.objects.select_related("transcript__agent_version", "judge")
    assert {s.judge.name for s in scores} == {"gpt-4o-mini/conversation-v1"}
    by_version = {}
    for s in scores:
        by_version.setdefault(s.transcript.agent_version.version, []).append(s)
    assert {v: len(rows) for v, rows in by_version.items()} == {V_OLD: 8, V_NEW: 8}
    drifting = [s for s in scores if s.findings]
    [drift] = drifting
    assert drift.transcript.external_id == truth["gate"]["call"]  # the newer version's sre call
    assert drift.transcript.agent_version.version == V_NEW and drift.score == 4
    assert drift.findings[0]["type"] == "persona_shift" and drift.findings[0]["turns"] == [10]
    assert drift.plan == PHASES
    verdict = Verdict.objects.get(
        transcript=drift.transcript, rule_version__rule__rule_id="conversation.no_drift"
    )
    assert verdict.flagged and verdict.turn == 10 and verdict.judge == drift.judge
    # the cited turn is where the agent turned coach
    assert "scored" in drift.transcript.turns.get(index=10).text
    assert drift.transcript.agent_version.agent.conversation_plan == PHASES


@pytest.mark.django_db
def test_demo_classifiers_have_verdicts_of_both_kinds_and_marks_for_a_pr_curve():
    from labeling.selectors.classifier_thresholds import classifier_thresholds

    output = load()
    assert "classifiers: " in output
    calls = Transcript.objects.filter(metadata__demo="classifiers")
    assert calls.values("tenant").distinct().count() == 2
    assert AgentVersion.objects.filter(agent__name="kettle-support").exclude(instructions="")
    guard = Verdict.objects.filter(judge__name="classifier/injection/patterns-v5", flagged=True)
    assert guard.filter(transcript__in=calls).count() >= 5
    frustration = Verdict.objects.filter(rule_version__rule__rule_id="classifiers.ai-frustration")
    targets = set(frustration.values_list("category__category", flat=True))
    assert {"ai", "situation"} <= targets  # frustrated customers of both kinds
    for rule_id in ("classifiers.injection", "classifiers.scope-drift"):
        figures = classifier_thresholds(rule_id=rule_id)
        assert figures["all"].marked >= 20 and len(figures["all"].curve) >= 3, rule_id
        assert {g.key for g in figures["tenants"]} == {"kettle-uk", "kettle-us"}


def test_the_recorded_workbench_answers_are_what_the_script_writes():
    spec = importlib.util.spec_from_file_location(
        "demo_workbench_answers", DEMO_DIR / "workbench_answers.py"
    )
    answers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(answers)
    assert json.loads((DEMO_DIR / "workbench.json").read_text()) == json.loads(
        json.dumps(answers.build())
    )


@pytest.mark.django_db
def test_demo_workbench_is_finished_from_the_judges_cache_without_a_model(settings, truth):
    from evals.judging.models import JudgeCacheEntry
    from evals.workbench.models import DraftVerdict, RuleDraft
    from labeling.selectors.workbench import draft_latest_run, workbench_result

    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""  # no model: answers come from the cache
    load()
    drafts = {d.note[:4]: d for d in RuleDraft.objects.filter(rule__rule_id="boundaries.no-hints")}
    assert len(drafts) == 2
    results = {}
    for key, draft in drafts.items():
        run = draft_latest_run(draft)
        assert run.judge_run.status == JudgeRun.Status.DONE
        assert (
            run.judge_run.calls_made == 0 and run.judge_run.cache_hits == run.judge_run.tasks_total
        )
        results[key] = workbench_result(run)
    both = next(r for r in results.values() if r.now_disagree)
    subtle_only = next(r for r in results.values() if not r.now_disagree)
    # Version 1 misreads rephrasings (false positives) and subtle hints (false negatives): the
    # fuller draft fixes both and errs once; the first draft fixes the subtle hints only.
    assert both.current.fp > 0 and both.current.fn > 0
    assert both.draft.fp == 1 and both.draft.fn == 0
    assert subtle_only.draft.fn == 0 and subtle_only.draft.fp == both.current.fp
    assert both.draft.w_agreement.value > both.current.w_agreement.value
    flipped = {f.transcript for f in both.flips if f.now == "agrees"}
    wrong = {key.split("|")[0] for key in truth["errors"] if "|boundaries.no-hints|1" in key}
    assert flipped <= wrong and flipped
    assert JudgeCacheEntry.objects.count() >= both.calls
    # The draft's verdicts are its own: no released verdict came of it.
    assert DraftVerdict.objects.exists()
    assert not Verdict.objects.filter(judge_run__draft_run__isnull=False).exists()
    # Loading again changes nothing.
    counts = (RuleDraft.objects.count(), JudgeRun.objects.count(), DraftVerdict.objects.count())
    load()
    assert (
        RuleDraft.objects.count(),
        JudgeRun.objects.count(),
        DraftVerdict.objects.count(),
    ) == counts
