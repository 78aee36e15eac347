"""The demo's release gate: 2026-11-21.1 passes, 2026-11-28.1
fails on the rubric leak, naming call and turn."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from console.demo_data import DEMO_DIR
from evals.gating.models import Gate, GateRun
from evals.rules.models import RuleVersion

pytestmark = pytest.mark.django_db


def gate(*args):
    out = StringIO()
    try:
        call_command("gate", *args, stdout=out, stderr=StringIO())
    except SystemExit as e:
        return e.code, out.getvalue()
    return 0, out.getvalue()


def test_demo_gate_passes_the_old_version_and_fails_the_new_one_on_the_leak():
    call_command("load_demo", stdout=StringIO())
    truth = json.loads((DEMO_DIR / "truth.json").read_text())["gate"]
    gate_obj = Gate.objects.get(name="release")
    assert gate_obj.golden_set.members.count() == 8
    assert RuleVersion.objects.filter(rule__rule_id=truth["rule"], status="gated").exists()
    # load_demo ran the gate once per version, so the history has one pass and one fail
    assert sorted(gate_obj.runs.values_list("status", flat=True)) == ["fail", "pass"]

    # the demo's trajectory axes have an agent with versions of the same names
    code, out = gate("--gate", "release", "--candidate", f"phone-screen:{truth['passes']}")
    assert code == 0, out

    code, out = gate("--gate", "release", "--candidate", f"phone-screen:{truth['fails']}")
    assert code == 1
    line, conversation = [x for x in out.splitlines() if x.startswith("FAIL")]
    assert line.startswith("FAIL  safety ceiling")
    assert f"{truth['call']} turn {truth['turn']} ({truth['rule']} v1)" in line
    # the leak also breaks the interviewer's persona: the conversation judge's drift on that call
    assert conversation.startswith("FAIL  conversation score")
    assert "value 8.125 | tolerance 0.5 | baseline 8.75" in conversation
    assert f"{truth['call']} turn {truth['turn']} (persona shift: score 4 vs 9" in conversation
    run = GateRun.objects.latest("pk")
    assert run.baseline.version == truth["passes"]

    # a second load changes nothing
    before = (GateRun.objects.count(), Gate.objects.count())
    call_command("load_demo", stdout=StringIO())
    assert (GateRun.objects.count(), Gate.objects.count()) == before
