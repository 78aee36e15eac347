"""Decision kinds (YAML, versioned like rules) and the agent's decisions on transcript lines."""

import pytest
from django.core.management import CommandError, call_command

from core.importing import ImportFailed
from evals.catalog.services.importing import transcripts_import
from evals.decisions.models import Decision, DecisionKind, DecisionKindVersion
from evals.decisions.services.kinds import decision_kinds_export, decision_kinds_import
from tests.evals.decision_helpers import KINDS_YAML
from tests.evals.import_helpers import call

pytestmark = pytest.mark.django_db


def line(**overrides) -> str:
    return call(**overrides)


def first(excinfo) -> str:
    return str(excinfo.value).splitlines()[0]


def test_kinds_import_versions_like_rules_and_round_trips():
    r = decision_kinds_import(text=KINDS_YAML, source="kinds.yaml")
    assert (r.created, r.unchanged) == (2, 0)
    tt = DecisionKind.objects.get(kind_id="turn-taking")
    assert tt.derive == "turn_gap"
    assert list(tt.versions.values_list("number", "answers")) == [(1, ["take the turn", "wait"])]
    assert decision_kinds_import(text=KINDS_YAML).changed is False
    # a changed answer list is version 2; a changed setting is updated in place
    changed = KINDS_YAML.replace("[hand off, keep helping]", "[hand off, keep helping, ask]")
    changed = changed.replace("derive: turn_gap", "status: retired")
    r = decision_kinds_import(text=changed)
    assert (r.new_versions, r.updated) == (1, 1)
    assert DecisionKindVersion.objects.filter(kind__kind_id="handoff").count() == 2
    assert DecisionKind.objects.get(kind_id="turn-taking").status == "retired"
    exported = decision_kinds_export()
    assert decision_kinds_import(text=exported).changed is False


@pytest.mark.parametrize(
    "yaml_text, where",
    [
        (
            "decision_kinds:\n  - id: x\n    question: q\n    answers: [a]\n",
            "kinds.yaml:4: answers",
        ),
        (
            "decision_kinds:\n  - id: Bad Id\n    question: q\n    answers: [a, b]\n",
            "kinds.yaml:2: id",
        ),
        (
            "decision_kinds:\n  - id: x\n    question: q\n    answers: [a, b]\n    derive: vad\n",
            "kinds.yaml:5: derive",
        ),
        (
            "decision_kinds:\n  - id: x\n    question: q\n    answers: [a, b]\n"
            + "  - id: x\n    question: q\n    answers: [a, b]\n",
            "kinds.yaml:5: id",
        ),
    ],
)
def test_bad_kinds_name_line_and_field_and_import_nothing(yaml_text, where):
    with pytest.raises(ImportFailed) as e:
        decision_kinds_import(text=yaml_text, source="kinds.yaml")
    assert first(e).startswith(where), first(e)
    assert not DecisionKind.objects.exists()


def test_reported_and_derived_decisions_come_in_with_the_call():
    decision_kinds_import(text=KINDS_YAML)
    decisions = [{"kind": "handoff", "turn": 2, "choice": "keep helping", "confidence": 0.4}]
    r = transcripts_import(lines=[line(decisions=decisions)], source="calls.jsonl")
    assert r.details["decisions"] == 2
    got = {d.kind.kind_id: d for d in Decision.objects.select_related("kind")}
    assert (got["handoff"].turn, got["handoff"].confidence, got["handoff"].source) == (
        2,
        0.4,
        "reported",
    )
    assert got["handoff"].at_ms == 7300  # the turn's start
    # turn 2 (agent, 7300) follows turn 1 (user, ends 7000): a derived take with a 300 ms gap
    tt = got["turn-taking"]
    assert (tt.turn, tt.choice, tt.gap_ms, tt.source) == (2, "take the turn", 300, "derived")
    # the same line again is a no-op
    again = transcripts_import(lines=[line(decisions=decisions)])
    assert again.changed is False and again.unchanged == 1
    assert Decision.objects.count() == 2


def test_decisions_added_to_a_known_call_update_it():
    transcripts_import(lines=[line()])
    decision_kinds_import(text=KINDS_YAML)
    r = transcripts_import(
        lines=[line(decisions=[{"kind": "handoff", "at_ms": 8000, "choice": "hand off"}])]
    )
    assert (r.updated, r.unchanged, r.details["decisions"]) == (1, 0, 2)
    assert Decision.objects.get(kind__kind_id="handoff").key == "ms:8000"


def test_a_changed_choice_is_refused_unless_replace():
    decision_kinds_import(text=KINDS_YAML)
    d = {"kind": "handoff", "turn": 2, "choice": "keep helping"}
    transcripts_import(lines=[line(decisions=[d])])
    changed = [line(decisions=[{**d, "choice": "hand off"}])]
    with pytest.raises(ImportFailed) as e:
        transcripts_import(lines=changed, source="calls.jsonl")
    assert first(e).startswith("calls.jsonl:1: decisions[0]: turn:2 was imported before")
    assert Decision.objects.get(kind__kind_id="handoff").choice == "keep helping"
    transcripts_import(lines=changed, replace=True)
    assert Decision.objects.get(kind__kind_id="handoff").choice == "hand off"
    assert Decision.objects.count() == 2


@pytest.mark.parametrize(
    "decision, field",
    [
        ({"kind": "nope", "turn": 0, "choice": "x"}, "decisions[1].kind"),
        ({"kind": "handoff", "turn": 0, "choice": "maybe"}, "decisions[1].choice"),
        ({"kind": "handoff", "turn": 9, "choice": "hand off"}, "decisions[1].turn"),
        ({"kind": "handoff", "choice": "hand off"}, "decisions[1].turn"),
        (
            {"kind": "handoff", "turn": 1, "choice": "hand off", "confidence": 2},
            "decisions[1].confidence",
        ),
        ({"kind": "handoff", "turn": 1, "choice": "hand off", "why": 1}, "decisions[1].why"),
        ({"kind": "handoff", "turn": 2, "choice": "hand off"}, "decisions[1]"),
    ],
)
def test_bad_decisions_name_line_and_field_and_the_import_writes_nothing(decision, field):
    decision_kinds_import(text=KINDS_YAML)
    good = {"kind": "handoff", "turn": 2, "choice": "keep helping"}
    lines = [line(id="ok"), line(id="bad", decisions=[good, decision])]
    with pytest.raises(ImportFailed) as e:
        transcripts_import(lines=lines, source="calls.jsonl")
    assert first(e).startswith(f"calls.jsonl:2: {field}:"), first(e)
    assert not Decision.objects.exists()


def test_commands_import_and_export_kinds(tmp_path, capsys):
    path = tmp_path / "kinds.yaml"
    path.write_text(KINDS_YAML)
    call_command("import_decision_kinds", str(path))
    assert "2 created" in capsys.readouterr().out
    call_command("export_decision_kinds")
    assert "turn-taking" in capsys.readouterr().out
    path.write_text("decision_kinds: [{id: x}]")
    with pytest.raises(CommandError, match="question"):
        call_command("import_decision_kinds", str(path))


def test_api_imports_kinds_and_lists_them(client, engineer):
    client.force_login(engineer)
    url = "/api/v1/decision-kinds/import/"
    r = client.post(url, data=KINDS_YAML, content_type="application/yaml")
    assert r.status_code == 201, r.content
    assert r.json()["created"] == 2
    again = client.post(url, data=KINDS_YAML, content_type="application/yaml")
    assert again.status_code == 200
    bad = client.post(url, data="decision_kinds: [{id: x}]", content_type="application/yaml")
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["field"] == "question"
    listed = client.get("/api/v1/decision-kinds/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    tt = next(k for k in rows if k["id"] == "turn-taking")
    assert tt["derive"] == "turn_gap"
    assert tt["versions"][0]["answers"] == ["take the turn", "wait"]
