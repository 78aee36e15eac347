"""The conversation score as a gate metric: the pure decision, and golden replay through the
fake judge server (the gate scores the golden calls it has no conversation score for)."""

import pytest

from evals.conversation import gate_metrics as cg
from evals.conversation.models import ConversationScore
from evals.gating import decision as g
from evals.gating import services as gating
from evals.gating.models import GateMetric
from evals.gating.output import metric_line
from evals.judging.models import JudgeRun
from tests.factories import TurnFactory

SCENARIOS = ["golden/a", "golden/b", "golden/c", "golden/d"]
GOLDEN = g.GoldenFacts(
    name="set v1",
    checksum="x",
    current_checksum="x",
    members=tuple(g.MemberFact(s) for s in SCENARIOS),
)
DRIFT = {"type": "repeated_ground", "check": "conversation.no_drift", "turns": [6], "note": "x"}


def calls(version, scores, findings=None):
    out = {}
    for s, score in zip(SCENARIOS, scores, strict=True):
        conv = None
        if score == "missing":
            pass
        elif score == "error":
            conv = cg.ConversationFact(score=None, error="timed out")
        else:
            conv = cg.ConversationFact(score=score, findings=tuple((findings or {}).get(s, ())))
        layers = {} if conv is None else {cg.LAYER: conv}
        out[s] = g.CallFacts(call=f"{version}-{s[-1]}", scenario=s, layers=layers)
    return out


def decide(cand, base, tolerance=0.5):
    spec = g.MetricSpec(cg.CONVERSATION_SCORE, tolerance=tolerance)
    return g.gate_decide(golden=GOLDEN, rules={}, metrics=[spec], candidate=cand, baseline=base)


def test_a_regression_past_the_tolerance_fails_and_names_the_call_and_turn():
    base = calls("v1", [9, 9, 8, 9])
    cand = calls("v2", [9, 9, 4, 9], findings={"golden/c": [DRIFT]})
    d = decide(cand, base)
    m = d.metrics[0]
    assert not d.passed and not m.passed
    assert (m.value, m.baseline) == (7.75, 8.75)
    assert m.label == "conversation score (1-10, whole-call judge)"
    [e] = m.evidence
    assert (e.call, e.turn) == ("v2-c", 6)
    assert e.note == "repeated ground: score 4 vs 8 in baseline v1-c"
    # the noise: the per-call differences 0, 0, -4, 0
    assert m.noise["pairs"] == 4 and m.noise["mean_diff"] == -1.0
    assert m.noise["sd"] == pytest.approx(2.0) and (m.noise["min"], m.noise["max"]) == (-4, 0)
    lo, hi = m.noise["interval"]
    assert lo == pytest.approx(-1 - 1.96 * 2 / 2, abs=1e-3) and hi == pytest.approx(0.96, abs=1e-3)
    assert "within the noise" in m.note  # one bad call: past the tolerance, inside the noise
    line = metric_line(d.to_dict()["metrics"][0])
    assert line.startswith("FAIL  conversation score") and "tolerance 0.5" in line
    assert "noise: per-call diff sd 2, mean -1 [-2.96, 0.96] over 4 calls" in line
    assert "v2-c turn 6 (repeated ground: score 4 vs 8" in line


def test_noise_within_the_tolerance_passes():
    base = calls("v1", [8, 9, 7, 8])
    cand = calls("v2", [9, 8, 7, 7])
    m = decide(cand, base).metrics[0]
    assert m.passed and m.value == 7.75 and m.baseline == 8.0 and m.evidence == []
    assert m.noise["mean_diff"] == -0.25 and m.noise["interval"][0] < 0 < m.noise["interval"][1]


def test_the_tolerance_is_settable():
    base = calls("v1", [9, 9, 8, 9])
    cand = calls("v2", [9, 9, 4, 9])
    assert not decide(cand, base, tolerance=0.5).passed
    assert decide(cand, base, tolerance=1.0).passed
    assert not decide(cand, base, tolerance=None).passed  # no tolerance: a problem
    assert decide(cand, base, tolerance=None).metrics[0].problems == ["no tolerance set"]


def test_a_better_candidate_passes_and_without_a_baseline_it_passes_with_a_note():
    assert decide(calls("v2", [9, 9, 9, 9]), calls("v1", [6, 7, 8, 9]), tolerance=0).passed
    m = decide(calls("v2", [5, 5, 5, 5]), None).metrics[0]
    assert m.passed and m.note == "no baseline yet: nothing to regress against"


def test_a_missing_or_errored_score_fails_the_gate_and_says_which():
    m = decide(calls("v2", [9, "missing", "error", 9]), calls("v1", [9, 9, 9, 9])).metrics[0]
    assert not m.passed
    assert m.problems == [
        "call v2-b (golden/b): no conversation score",
        "call v2-c (golden/c): conversation score errored",
    ]
    m = decide(calls("v2", [9, 9, 9, 9]), calls("v1", [9, "missing", 9, 9])).metrics[0]
    assert m.problems == ["baseline call v1-b (golden/b): no conversation score"]


def test_the_kind_is_registered_with_its_fields():
    kind = g.METRIC_KINDS[cg.CONVERSATION_SCORE]
    assert kind.fields == ("tolerance",) and kind.required == ("tolerance",)
    assert kind.scope == g.NO_RULES


# ---- golden replay through the fake judge ----------------------------------------------------


def _conversation_gate(world, tolerance):
    world.gate.metrics.all().delete()
    GateMetric.objects.create(gate=world.gate, kind=cg.CONVERSATION_SCORE, tolerance=tolerance)
    for t in world.calls.values():  # a line that tells the fake judge which call it reads
        TurnFactory(transcript=t, index=4, speaker="agent", text=f"Goodbye from {t.external_id}.")


@pytest.mark.django_db
def test_gate_replays_the_golden_set_through_the_conversation_judge(world, fake_judge):
    _conversation_gate(world, tolerance=0.5)
    first = world.run("2026-11-21.1")
    assert first.status == "pass", first.results
    assert len(fake_judge.requests) == 3  # one whole-call judgement per golden call
    assert first.results["conversation_judge"] == "gpt-4o-mini/conversation-v1"
    assert JudgeRun.objects.filter(params__conversation=True).count() == 1

    fake_judge.requests.clear()
    fake_judge.conversation_by_text = {
        "Goodbye from 2026-11-28.1-1.": (
            3,
            [{"type": "loop", "turns": [2], "note": "Asks the same question three times."}],
        )
    }
    run = world.run("2026-11-28.1")
    assert len(fake_judge.requests) == 3  # the baseline's scores are cached and stored
    assert run.status == "fail"
    [m] = run.results["metrics"]
    assert m["kind"] == cg.CONVERSATION_SCORE and not m["passed"]
    assert m["baseline"] == 9 and m["value"] == pytest.approx(7.0)
    assert [(e["call"], e["turn"]) for e in m["evidence"]] == [("2026-11-28.1-1", 2)]
    assert m["noise"]["pairs"] == 3 and m["noise"]["min"] == -6
    assert ConversationScore.objects.count() == 6
    assert JudgeRun.objects.filter(params__conversation=True).count() == 2


@pytest.mark.django_db
def test_noise_within_tolerance_passes_on_replay(world, fake_judge):
    _conversation_gate(world, tolerance=0.5)
    assert world.run("2026-11-21.1").status == "pass"
    fake_judge.conversation_by_text = {"Goodbye from 2026-11-28.1-0.": (8, [])}
    run = world.run("2026-11-28.1")
    assert run.status == "pass", run.results
    [m] = run.results["metrics"]
    assert m["value"] == pytest.approx(26 / 3) and m["noise"]["mean_diff"] == pytest.approx(
        -1 / 3, abs=1e-3
    )


@pytest.mark.django_db
def test_without_a_judge_missing_scores_fail_the_gate(world, settings):
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    _conversation_gate(world, tolerance=0.5)
    run = world.run("2026-11-21.1")
    assert run.status == "fail"
    assert (
        "call 2026-11-21.1-0 (golden/backend-01): no conversation score"
        in (run.results["metrics"][0]["problems"])
    )


@pytest.mark.django_db
def test_the_gate_yaml_takes_the_kind_and_its_tolerance(world):
    data = gating.gates_export()
    data["gates"][0]["metrics"] = [{"kind": "conversation_score", "tolerance": 0.75}]
    gating.gates_import(data=data, by="lena")
    [m] = world.gate.metrics.all()
    assert (m.kind, m.tolerance) == ("conversation_score", 0.75)
    with pytest.raises(gating.GateConfigInvalid, match="tolerance"):
        data["gates"][0]["metrics"] = [{"kind": "conversation_score"}]
        gating.gates_import(data=data, by="lena")
