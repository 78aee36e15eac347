"""Triage services: each of the three ways, status,
duplicates, comments, history and permissions."""

import pytest
from django.core.exceptions import PermissionDenied

from evals.rules.models import Rule, RuleVersion
from labeling.models import IssueRow, IssueRowEvent
from labeling.selectors.issue_rows import issue_row_next_steps, issue_row_rule_prefill
from labeling.services import triage
from tests.factories import JudgeFactory, RuleFactory, RuleVersionFactory, VerdictFactory
from tests.labeling.issue_helpers import call_with_turns, file_row, gated_rule

pytestmark = pytest.mark.django_db


def events(row, kind):
    return list(IssueRowEvent.objects.filter(row=row, kind=kind).order_by("id"))


def test_write_rule_creates_a_draft_v1_linked_to_the_row_with_history(reviewer, engineer):
    row = file_row(reviewer, what="Talks over the candidate at 14:20", severity="critical")
    prefill = issue_row_rule_prefill(row)
    assert prefill["severity"] == "critical"
    assert prefill["text"] == "Talks over the candidate at 14:20"
    assert prefill["group"] == "asking"  # the turn's phase
    assert prefill["rule_id"].startswith("asking.talks-over-the-candidate")

    version = triage.issue_row_write_rule(
        row=row,
        actor=engineer,
        rule_id=prefill["rule_id"],
        group=prefill["group"],
        text="Let the candidate finish before speaking.",
        severity=prefill["severity"],
    )
    row.refresh_from_db()
    assert (version.number, version.status) == (1, RuleVersion.Status.DRAFT)
    assert version.rule.severity == "critical"
    assert version.source == f"issue row {row.number}"
    assert (row.outcome, row.status) == (IssueRow.Outcome.NEW_RULE, IssueRow.Status.TRIAGED)
    assert row.rule_version_id == version.pk and row.rule_id == version.rule_id
    [event] = events(row, "write_rule")
    assert event.actor == engineer
    assert event.data["changes"]["status"] == ["new", "triaged"]
    assert event.data["changes"]["outcome"] == ["", "new_rule"]
    assert event.data["changes"]["rule_version"] == [None, f"{prefill['rule_id']} v1"]


def test_next_steps_follow_verdicts_marks_and_promotion(reviewer, engineer):
    from labeling.models import Mark

    row = file_row(reviewer)
    version = triage.issue_row_write_rule(
        row=row,
        actor=engineer,
        rule_id="asking.x",
        group="asking",
        text="One question a turn.",
        severity="major",
    )
    steps = {s["step"]: s for s in issue_row_next_steps(row)}
    assert (
        steps["written"]["done"] and not steps["judged"]["done"] and not steps["promoted"]["done"]
    )

    verdict = VerdictFactory(rule_version=version, flagged=True, turn=None)
    VerdictFactory(rule_version=version, flagged=False, error="timeout")  # errored: not counted
    Mark.objects.create(verdict=verdict, reviewer=reviewer, correct=False)
    steps = {s["step"]: s for s in issue_row_next_steps(row)}
    assert steps["judged"]["done"] and "1 verdicts, 1 flagged" in steps["judged"]["note"]
    assert steps["judge checked"]["done"] and "1 marks, 1 wrong" in steps["judge checked"]["note"]

    RuleVersion.objects.filter(pk=version.pk).update(status="gated")
    steps = {s["step"]: s for s in issue_row_next_steps(row)}
    assert steps["promoted"]["done"]


def test_fix_rule_adds_version_n_plus_one_and_the_old_one_stays_gated(reviewer, engineer):
    rule = gated_rule()
    row = file_row(reviewer, what="Judge flags a clarifier as a second question")
    version = triage.issue_row_fix_rule(
        row=row,
        actor=engineer,
        rule=rule,
        text="Ask one question per turn; a clarifier is not a second question.",
    )
    row.refresh_from_db()
    assert (version.number, version.status) == (2, RuleVersion.Status.CANDIDATE)
    assert rule.versions.get(number=1).status == RuleVersion.Status.GATED
    assert row.rule_version == version and row.outcome == IssueRow.Outcome.RULE_FIX
    [event] = events(row, "fix_rule")
    assert event.data["replaces"] == 1
    promoted = {s["step"]: s for s in issue_row_next_steps(row)}["promoted"]
    assert not promoted["done"] and "v1 stays in the gate" in promoted["note"]


def test_fix_rule_refuses_unchanged_text(reviewer, engineer):
    rule = gated_rule()
    row = file_row(reviewer)
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_fix_rule(
            row=row, actor=engineer, rule=rule, text="  Ask one question per turn. "
        )
    assert exc.value.field == "text"
    assert rule.versions.count() == 1
    assert not IssueRowEvent.objects.filter(row=row, kind="fix_rule").exists()


def test_add_signal_creates_a_detector_rule_with_validated_parameters(reviewer, engineer):
    row = file_row(reviewer, what="talks over candidate at 14:20", audio_only=True)
    spec = triage.detector_spec_from_form("talk_over", {"param_talk_over_max_overlap_ms": "800"})
    version = triage.issue_row_create_signal(
        row=row,
        actor=engineer,
        rule_id="signals.no-talk-over",
        group="signals",
        text="The agent does not talk over the candidate.",
        severity="major",
        detector=spec,
    )
    row.refresh_from_db()
    assert version.detector == {"name": "talk_over", "max_overlap_ms": 800}
    assert version.rule.detector["name"] == "talk_over"
    assert row.outcome == IssueRow.Outcome.NEW_SIGNAL and row.rule_version == version


def test_add_signal_rejects_bad_parameters_and_writes_nothing(reviewer, engineer):
    row = file_row(reviewer)
    with pytest.raises(triage.TriageError) as exc:
        triage.detector_spec_from_form("talk_over", {"param_talk_over_max_overlap_ms": "lots"})
    assert exc.value.field == "detector.max_overlap_ms"
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_create_signal(
            row=row,
            actor=engineer,
            rule_id="signals.x",
            group="signals",
            text="x",
            severity="major",
            detector={"name": "talk_over", "max_overlap_ms": -5},
        )
    assert exc.value.field == "detector.max_overlap_ms"
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_create_signal(
            row=row,
            actor=engineer,
            rule_id="signals.x",
            group="signals",
            text="x",
            severity="major",
            detector={"name": "no_such_detector"},
        )
    assert exc.value.field == "detector.name"
    row.refresh_from_db()
    assert row.outcome == "" and not Rule.objects.filter(rule_id="signals.x").exists()
    assert not IssueRowEvent.objects.filter(row=row, kind="add_signal").exists()


def test_add_signal_links_an_existing_detector_rule_or_records_a_request(reviewer, engineer):
    detector_rule = RuleFactory(
        rule_id="timing.no-long-silence",
        group="signals",
        detector={"name": "silence_before_agent", "max_ms": 3000},
    )
    RuleVersionFactory(rule=detector_rule, number=1, detector=detector_rule.detector)
    v2 = RuleVersionFactory(rule=detector_rule, number=2, detector=detector_rule.detector)
    plain = RuleFactory()
    row, other = file_row(reviewer), file_row(reviewer)

    with pytest.raises(triage.TriageError):
        triage.issue_row_link_signal(row=row, actor=engineer, rule=plain)
    triage.issue_row_link_signal(row=row, actor=engineer, rule=detector_rule)
    row.refresh_from_db()
    assert row.rule_version == v2 and row.outcome == "new_signal"

    triage.issue_row_request_signal(
        row=other, actor=engineer, request="Detect the candidate's line dropping out"
    )
    other.refresh_from_db()
    assert other.signal_request.startswith("Detect") and other.rule_id is None
    assert issue_row_next_steps(other)[0]["step"] == "detector requested"


def test_write_rule_with_a_taken_id_names_the_field_and_writes_nothing(reviewer, engineer):
    RuleFactory(rule_id="asking.taken")
    row = file_row(reviewer)
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_write_rule(
            row=row,
            actor=engineer,
            rule_id="asking.taken",
            group="asking",
            text="x",
            severity="major",
        )
    assert exc.value.field == "rule_id"
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_write_rule(
            row=row, actor=engineer, rule_id="Bad Id!", group="asking", text="x", severity="major"
        )
    assert exc.value.field == "rule_id"
    row.refresh_from_db()
    assert row.outcome == "" and row.status == "new"


def test_assign_status_comment_each_leave_a_trail(reviewer, engineer, lead):
    row = file_row(reviewer)
    triage.issue_row_assign(row=row, actor=lead, assignee=engineer)
    triage.issue_row_set_status(row=row, actor=engineer, status="in_progress")
    triage.issue_row_comment(row=row, actor=engineer, text="Looking at the audio.")
    triage.issue_row_set_status(
        row=row, actor=engineer, status="in_progress"
    )  # no change: no event
    with pytest.raises(triage.TriageError):
        triage.issue_row_assign(row=row, actor=lead, assignee=reviewer)  # reviewers cannot triage
    row.refresh_from_db()
    assert row.assignee == engineer and row.status == "in_progress"
    kinds = list(row.events.values_list("kind", "actor__username"))
    assert kinds == [
        ("filed", "priya"),
        ("assign", "lena"),
        ("status", "marco"),
        ("comment", "marco"),
    ]
    assert row.events.get(kind="assign").data["changes"] == {"assignee": [None, "marco"]}
    assert row.events.get(kind="comment").data["text"] == "Looking at the audio."


def test_wont_fix_needs_a_reason_and_closed_rows_refuse_a_way_until_reopened(reviewer, engineer):
    row = file_row(reviewer)
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_set_status(row=row, actor=engineer, status="wont_fix")
    assert exc.value.field == "reason"
    triage.issue_row_close_wont_fix(
        row=row, actor=engineer, reason="Expected behaviour for this scenario"
    )
    row.refresh_from_db()
    assert (row.status, row.outcome, row.reason) == (
        "wont_fix",
        "wont_fix",
        "Expected behaviour for this scenario",
    )
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_request_signal(row=row, actor=engineer, request="x")
    assert exc.value.field == "status"
    triage.issue_row_set_status(row=row, actor=engineer, status="triaged")
    row.refresh_from_db()
    assert (row.status, row.outcome, row.reason) == ("triaged", "", "")


def test_duplicates_refuse_itself_and_cycles(reviewer, engineer):
    a, b, c = file_row(reviewer), file_row(reviewer), file_row(reviewer)
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_mark_duplicate(row=a, actor=engineer, of=a)
    assert exc.value.field == "duplicate_of"
    triage.issue_row_mark_duplicate(row=b, actor=engineer, of=a, reason="same call")
    triage.issue_row_mark_duplicate(row=c, actor=engineer, of=b)
    with pytest.raises(triage.TriageError) as exc:
        triage.issue_row_mark_duplicate(row=a, actor=engineer, of=c)  # a <- b <- c <- a
    assert "leads back" in exc.value.message
    a.refresh_from_db(), b.refresh_from_db()
    assert a.duplicate_of is None and a.status == "new"
    assert (b.duplicate_of, b.status, b.outcome, b.reason) == (
        a,
        "resolved",
        "duplicate",
        "same call",
    )
    assert b.events.get(kind="duplicate").data["changes"]["duplicate_of"] == [None, a.number]


def test_reviewer_cannot_triage_at_the_service_layer(reviewer):
    row = file_row(reviewer)
    for call in (
        lambda: triage.issue_row_assign(row=row, actor=reviewer, assignee=None),
        lambda: triage.issue_row_comment(row=row, actor=reviewer, text="hi"),
        lambda: triage.issue_row_request_signal(row=row, actor=reviewer, request="x"),
        lambda: triage.issue_row_write_rule(
            row=row, actor=reviewer, rule_id="a.b", group="asking", text="x", severity="minor"
        ),
    ):
        with pytest.raises(PermissionDenied):
            call()
    assert list(row.events.values_list("kind", flat=True)) == ["filed"]


def test_group_guess_uses_the_rules_words_then_judged_rules(reviewer):
    t = call_with_turns()
    t.turns.update(phase="")
    for group, text in [
        ("boundaries", "Never reveal the scoring rubric or hint at the answer to the candidate."),
        ("opening", "Greet the candidate once, by name."),
        ("asking", "Ask the candidate one question at a time."),
    ]:
        RuleVersionFactory(rule=RuleFactory(group=group), text=text)
    # "candidate" is in every group's rules and weighs little; "revealed" and "rubric" decide.
    row = file_row(reviewer, t, what="Revealed the rubric to the candidate")
    assert issue_row_rule_prefill(row)["group"] == "boundaries"
    row = file_row(reviewer, t, what="Greeted them twice")
    assert issue_row_rule_prefill(row)["group"] == "opening"
    rule_version = RuleVersionFactory(rule=RuleFactory(group="closing"))
    VerdictFactory(
        transcript=t, rule_version=rule_version, judge=JudgeFactory(), flagged=True, turn=3
    )
    row = file_row(reviewer, t, turn=3, what="Something odd")
    assert issue_row_rule_prefill(row)["group"] == "closing"


def test_suggested_way_follows_audio_and_the_judge_at_the_turn(reviewer):
    from labeling.selectors.issue_rows import issue_row_judged_at_turn, issue_row_suggested_way

    t = call_with_turns()
    audio = file_row(reviewer, t, turn=1, audio_only=True)
    plain = file_row(reviewer, t, turn=4)
    judged = file_row(reviewer, t, turn=3)
    VerdictFactory(transcript=t, flagged=True, turn=3, turns=[3], rationale="Two questions.")
    VerdictFactory(transcript=t, flagged=False)
    assert [issue_row_suggested_way(r) for r in (audio, plain, judged)] == ["signal", "rule", "fix"]
    assert [v.rationale for v in issue_row_judged_at_turn(judged)] == ["Two questions."]
    assert issue_row_judged_at_turn(plain) == []


def test_assignee_and_duplicate_target_resolve_or_name_the_field(reviewer, engineer):
    row = file_row(reviewer)
    assert triage.assignee_resolve("") is None
    assert triage.assignee_resolve(engineer.username) == engineer
    with pytest.raises(triage.TriageError) as unknown_user:
        triage.assignee_resolve("nobody")
    assert (unknown_user.value.field, unknown_user.value.message) == (
        "assignee",
        "no user 'nobody'",
    )
    assert triage.duplicate_target_resolve(row.number) == row
    with pytest.raises(triage.TriageError) as unknown_row:
        triage.duplicate_target_resolve(row.number + 1)
    assert (unknown_row.value.field, unknown_row.value.message) == (
        "duplicate_of",
        f"no row {row.number + 1}",
    )


def test_add_signal_has_one_set_of_defaults_for_the_page_and_the_api(client, reviewer, engineer):
    from tests.factories import token_client

    page_row = file_row(reviewer, what="Long pause before answering", severity="major")
    api_row = file_row(reviewer, what="Long pause before answering", severity="major")
    client.force_login(engineer)
    posted = client.post(
        f"/issues/{page_row.number}/add-signal/",
        {
            "mode": "create",
            "detector": "silence_before_agent",
            "param_silence_before_agent_max_ms": "2500",
        },
    )
    assert posted.status_code == 302, posted.content.decode()[:500]
    answered = token_client(engineer).post(
        f"/api/v1/issue-rows/{api_row.number}/add-signal/",
        {"detector": {"name": "silence_before_agent", "max_ms": 2500}},
        format="json",
    )
    assert answered.status_code == 200, answered.content
    made = {}
    for row in (page_row, api_row):
        row.refresh_from_db()
        version = row.rule_version
        made[row.pk] = (version.rule.group, version.text, version.rule.severity, version.detector)
        assert version.rule.rule_id == f"signals.row-{row.number}"
    assert (
        made[page_row.pk]
        == made[api_row.pk]
        == (
            "signals",
            "Long pause before answering",
            "major",
            {"name": "silence_before_agent", "max_ms": 2500},
        )
    )
    with pytest.raises(triage.TriageError, match="no detector rule 'nope'"):
        triage.issue_row_add_signal(row=page_row, actor=engineer, way="link", rule="nope")
