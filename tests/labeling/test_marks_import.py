"""Marks made elsewhere: JSON Lines, CSV and Label Studio's export, all or nothing, idempotent,
through the same write as the review page, by command and over HTTP (leads only)."""

import datetime as dt
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from core.importing import ImportFailed
from labeling.models import Assignment, Mark, VerdictTally
from labeling.selectors import calibration as cal
from labeling.services.marks import mark_set
from labeling.services.marks_import import marks_import
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(reviewer, make_user):
    sam = make_user("reviewer", username="sam")
    rule = f.RuleFactory(rule_id="asking.one-question")
    rv = f.RuleVersionFactory(rule=rule, number=2)
    judge = f.JudgeFactory(name="gpt-4o-mini/conduct-v3")
    calls = [f.TranscriptFactory(external_id=f"call-{i}") for i in range(4)]
    verdicts = [
        f.VerdictFactory(
            transcript=t,
            rule_version=rv,
            judge=judge,
            flagged=i % 2 == 0,
            turn=0 if i % 2 == 0 else None,
        )
        for i, t in enumerate(calls)
    ]
    errored = f.VerdictFactory(
        transcript=calls[0],
        rule_version=rv,
        judge=f.JudgeFactory(name="claude/conduct-v1"),
        error="timeout",
    )
    return {
        "rv": rv,
        "judge": judge,
        "calls": calls,
        "verdicts": verdicts,
        "errored": errored,
        "priya": reviewer,
        "sam": sam,
    }


def line(call="call-0", reviewer="priya", correct=True, **extra):
    obj = {
        "transcript": call,
        "rule": "asking.one-question",
        "rule_version": 2,
        "judge": "gpt-4o-mini/conduct-v3",
        "reviewer": reviewer,
        "correct": correct,
        "note": "",
    }
    obj.update(extra)
    return json.dumps(obj) + "\n"


def run(text, **kwargs):
    return marks_import(lines=io.StringIO(text), source="labels.jsonl", **kwargs)


def test_jsonl_marks_count_like_browser_marks_and_say_where_they_came_from(world):
    text = (
        line("call-0", correct=True, note="agreed")
        + line("call-1", correct=False)
        + line("call-0", "sam", "wrong")
    )
    result = run(text)
    assert (result.created, result.updated, result.unchanged) == (3, 0, 0)
    mark = Mark.objects.get(verdict=world["verdicts"][0], reviewer=world["priya"])
    assert mark.correct is True and mark.note == "agreed"
    assert mark.source == "labels.jsonl (JSON Lines)"
    # The tally's triggers saw them: call-0 is tied (right and wrong), call-1 a false negative.
    assert VerdictTally.objects.count() == 2
    counts = cal.calibration_counts(judge=world["judge"])[(world["rv"].pk, world["judge"].pk)]
    assert (counts.fn, counts.waiting, counts.marked) == (1, 1, 1)
    assert counts.pairs.n == 1

    # The same file again changes nothing; another answer changes the mark, as mark_set would.
    again = run(text)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
    changed = run(line("call-1", correct=True))
    assert (changed.created, changed.updated, changed.unchanged) == (0, 1, 0)
    assert Mark.objects.get(verdict=world["verdicts"][1]).correct is True
    # A mark changed in the browser afterwards is a mark made in Docket.
    mark_set(reviewer=world["priya"], verdict=world["verdicts"][1], correct=False, note="no")
    assert Mark.objects.get(verdict=world["verdicts"][1]).source == ""


def test_a_mark_joins_the_reviewers_assignment_and_weighs_as_the_sample_says(world):
    call = world["calls"][2]
    item = f.SampleItemFactory(transcript=call, inclusion_probability=0.25)
    now = timezone.now()
    assignment = Assignment.objects.create(
        item=item,
        reviewer=world["priya"],
        claimed_at=now,
        lease_expires_at=now + dt.timedelta(minutes=45),
        finished_at=now,
    )
    run(line("call-2"))
    mark = Mark.objects.get(verdict=world["verdicts"][2])
    assert mark.assignment == assignment
    assert VerdictTally.objects.get(verdict=world["verdicts"][2]).weight == pytest.approx(4.0)


def test_a_bad_file_imports_nothing_and_names_each_line_and_field(world, engineer):
    text = (
        line("call-0")
        + line("call-9")
        + line("call-1", reviewer="nobody")
        + line("call-1", reviewer="marco")
        + line("call-2", correct="maybe")
        + line("call-3", judge="claude/conduct-v1")
        + line("call-0", judge="claude/conduct-v1")
        + line("call-0")
        + line("call-3", rule_version=7)
        + line("call-3", verdict=1)
        + "not json\n"
    )
    with pytest.raises(ImportFailed) as exc:
        run(text)
    got = {(e.where, e.field): e.reason for e in exc.value.errors}
    assert got == {
        ("2", "transcript"): "call-9 is not imported",
        ("3", "reviewer"): "nobody is not a Docket user (create_reviewers makes them reviewers)",
        ("4", "reviewer"): "marco may not review (not in the reviewer or lead role)",
        ("5", "correct"): "must be true or false (or right/wrong), not 'maybe'",
        ("6", "judge"): "claude/conduct-v1 has no verdict on call-3 for asking.one-question v2 "
        "(import the verdicts first)",
        ("7", "judge"): f"verdict {world['errored'].pk} errored in the judge; an errored verdict "
        "cannot be marked.",
        ("8", "reviewer"): "priya marks the verdict of gpt-4o-mini/conduct-v3 on call-0 for "
        "asking.one-question v2 twice (first at 1)",
        ("9", "rule_version"): "asking.one-question version 7 does not exist",
        ("10", "verdict"): "unknown field (a mark has transcript, rule, rule_version, judge, "
        "reviewer, correct, note)",
        ("11", "json"): got[("11", "json")],
    }
    assert str(exc.value).startswith("labels.jsonl:2: transcript: call-9 is not imported")
    assert not Mark.objects.exists()


def test_create_reviewers_makes_the_missing_ones_reviewers(world):
    result = run(line("call-0", reviewer="dana@example.com"), create_reviewers=True)
    assert result.details["new_reviewers"] == 1
    dana = get_user_model().objects.get(username="dana@example.com")
    assert list(dana.groups.values_list("name", flat=True)) == ["reviewer"]
    assert not dana.has_usable_password()
    assert Mark.objects.get().reviewer == dana
    with pytest.raises(ImportFailed, match="cannot be a username"):
        run(line("call-1", reviewer="dana smith"), create_reviewers=True)


CSV = (
    "Transcript,rule,rule_version,judge,reviewer,correct,note\r\n"
    'call-0,asking.one-question,2,gpt-4o-mini/conduct-v3,priya,right,"two lines,\nof note"\r\n'
    "call-1,asking.one-question,2,gpt-4o-mini/conduct-v3,sam,0,\r\n"
    "\r\n"
)


def test_csv_with_the_same_columns(world):
    result = marks_import(lines=io.StringIO(CSV), source="team.csv", fmt="csv")
    assert result.created == 2
    m = Mark.objects.get(verdict=world["verdicts"][0])
    assert (m.correct, m.note, m.source) == (True, "two lines, of note", "team.csv (CSV)")
    assert Mark.objects.get(verdict=world["verdicts"][1]).correct is False
    bad = CSV.replace("rule_version", "version") + "call-2,asking.one-question\r\n"
    with pytest.raises(ImportFailed) as exc:
        marks_import(lines=io.StringIO(bad), source="team.csv", fmt="csv")
    assert str(exc.value) == (
        "team.csv:1: header: unknown column version; missing column rule_version (the columns "
        "are transcript, rule, rule_version, judge, reviewer, correct, note)"
    )
    short = CSV + "call-2,asking.one-question\r\n"
    with pytest.raises(ImportFailed) as exc:
        marks_import(lines=io.StringIO(short), source="team.csv", fmt="csv")
    assert str(exc.value) == "team.csv:6: row: 2 cells, the header names 7"


def _task(call, annotations):
    return {
        "id": 7,
        "data": {
            "transcript": call,
            "rule": "asking.one-question",
            "rule_version": 2,
            "judge": "gpt-4o-mini/conduct-v3",
            "rationale": "Asked two questions.",
        },
        "annotations": annotations,
        "predictions": [],
    }


def _annotation(who, choice, note=None, cancelled=False):
    result = [
        {
            "from_name": "correct",
            "to_name": "rationale",
            "type": "choices",
            "value": {"choices": [choice]},
        }
    ]
    if note:
        result.append(
            {
                "from_name": "note",
                "to_name": "rationale",
                "type": "textarea",
                "value": {"text": [note]},
            }
        )
    return {"id": 1, "result": result, "was_cancelled": cancelled, "completed_by": who}


def test_label_studio_export(world):
    export = [
        _task(
            "call-0",
            [
                _annotation({"id": 3, "email": "priya"}, "Right", note="heard it"),
                _annotation(12, "Wrong"),
                _annotation(4, "Wrong", cancelled=True),
            ],
        ),
        _task("call-1", [_annotation({"id": 5, "email": "sam"}, "wrong")]),
    ]
    text = json.dumps(export)
    result = marks_import(lines=io.StringIO(text), source="project-3.json", create_reviewers=True)
    assert (result.created, result.details["cancelled_annotations"]) == (3, 1)
    assert result.details["new_reviewers"] == 1  # label-studio-12
    priya = Mark.objects.get(verdict=world["verdicts"][0], reviewer=world["priya"])
    assert (priya.correct, priya.note, priya.source) == (
        True,
        "heard it",
        "project-3.json (Label Studio)",
    )
    assert Mark.objects.get(reviewer__username="label-studio-12").correct is False
    again = marks_import(lines=io.StringIO(text), source="project-3.json", create_reviewers=True)
    assert (again.created, again.unchanged) == (0, 3)

    bad = [_task("call-2", [_annotation({"id": 5, "email": "sam"}, "maybe")])]
    with pytest.raises(ImportFailed) as exc:
        marks_import(lines=io.StringIO(json.dumps(bad)), source="p.json")
    assert str(exc.value) == (
        "p.json:item 1: annotations[0].result[0].value.choices: "
        "must be true or false (or right/wrong), not 'maybe'"
    )


def test_the_command(world, tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(line("call-0") + line("call-1", "sam", False))
    out = io.StringIO()
    call_command("import_marks", str(path), stdout=out)
    assert out.getvalue().strip() == "marks: 2 created, 0 unchanged"
    csv_path = tmp_path / "labels.csv"
    csv_path.write_text(CSV)
    out = io.StringIO()
    call_command("import_marks", str(csv_path), stdout=out)
    assert "marks: 0 created, 1 updated, 1 unchanged" in out.getvalue()
    path.write_text(line("call-0", reviewer="dana"))
    with pytest.raises(CommandError) as exc:
        call_command("import_marks", str(path))
    assert f"{path}:1: reviewer: dana is not a Docket user" in str(exc.value)
    call_command("import_marks", str(path), "--create-reviewers", stdout=io.StringIO())
    assert Mark.objects.filter(reviewer__username="dana").exists()


def test_the_api_is_for_leads(world, lead, engineer):
    body = line("call-0") + line("call-1", "sam", False)
    refused = f.token_client(engineer).post(
        "/api/v1/marks/import/", body, content_type="application/x-ndjson"
    )
    assert refused.status_code == 403 and "import_marks" in refused.json()["detail"]
    client = f.token_client(lead)
    r = client.post("/api/v1/marks/import/", body, content_type="application/x-ndjson")
    assert r.status_code == 201, r.content
    assert (r.json()["kind"], r.json()["created"]) == ("marks", 2)
    assert Mark.objects.get(reviewer__username="sam").source == "body from lena (JSON Lines)"
    r = client.post("/api/v1/marks/import/", body, content_type="application/x-ndjson")
    assert r.status_code == 200 and r.json()["unchanged"] == 2
    r = client.post("/api/v1/marks/import/", CSV, content_type="text/csv")
    assert r.status_code == 201 and r.json()["updated"] == 1
    export = [_task("call-3", [_annotation({"id": 1, "email": "priya"}, "Right")])]
    r = client.post("/api/v1/marks/import/", json.dumps(export), content_type="application/json")
    assert r.status_code == 201 and r.json()["created"] == 1
    assert Mark.objects.get(verdict=world["verdicts"][3]).source == "body from lena (Label Studio)"
    r = client.post(
        "/api/v1/marks/import/?create_reviewers=1",
        line("call-2", reviewer="noor2"),
        content_type="application/x-ndjson",
    )
    assert r.status_code == 201 and r.json()["details"]["new_reviewers"] == 1
    r = client.post(
        "/api/v1/marks/import/",
        line("call-3", reviewer="ghost"),
        content_type="application/x-ndjson",
    )
    assert r.status_code == 400 and r.json()["code"] == "import_failed"
    assert r.json()["errors"][0]["line"] == "1" and r.json()["errors"][0]["field"] == "reviewer"
    assert Mark.objects.filter(verdict=world["verdicts"][3]).count() == 1


@pytest.mark.parametrize("version", ["²", "٣", str(2**63)])
def test_a_csv_rule_version_that_is_no_ascii_number_is_named(world, version):
    bad = CSV.replace(
        "asking.one-question,2,gpt-4o-mini/conduct-v3,sam",
        f"asking.one-question,{version},gpt-4o-mini/conduct-v3,sam",
    )
    with pytest.raises(ImportFailed) as exc:
        marks_import(lines=io.StringIO(bad), source="team.csv", fmt="csv")
    assert [(e.where, e.field) for e in exc.value.errors] == [
        ("4", "rule_version")
    ]  # line 4: a note spans two
    assert not Mark.objects.exists()
