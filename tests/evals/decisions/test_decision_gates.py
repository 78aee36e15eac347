"""Decision accuracy as a gate metric: the pure decision and its YAML shape."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from core import stats as metrics
from evals.decisions import gate_metrics as dg
from evals.decisions.services.kinds import decision_kinds_import
from evals.gating import decision as g
from evals.gating.services import GateConfigInvalid, metric_as_yaml, metric_clean
from tests.evals.decision_helpers import KINDS_YAML

SCENARIOS = ["golden/a", "golden/b"]


def call(name, scenario, decisions):
    return g.CallFacts(
        call=name,
        scenario=scenario,
        layers={
            dg.LAYER: tuple(
                dg.DecisionFact(kind, choice, truth, turn=i, ref=i)
                for i, (kind, choice, truth) in enumerate(decisions)
            )
        },
    )


T, W = "take the turn", "wait"
GOOD = [("turn-taking", T, T), ("turn-taking", W, W), ("turn-taking", T, T), ("handoff", "x", "y")]
CUT_OFF = [
    ("turn-taking", T, W),
    ("turn-taking", T, W),
    ("turn-taking", T, T),
    ("turn-taking", T, ""),
]


def decide(candidate, baseline=None, spec=None):
    gold = g.GoldenFacts("gs", "c", "c", tuple(g.MemberFact(s) for s in SCENARIOS))
    return g.gate_decide(
        golden=gold,
        rules={},
        metrics=[spec or g.MetricSpec(dg.DECISION_ACCURACY, measure="turn-taking", threshold=0.8)],
        candidate={s: call(f"{s}-c", s, d) for s, d in zip(SCENARIOS, candidate)},
        baseline=None
        if baseline is None
        else {s: call(f"{s}-b", s, d) for s, d in zip(SCENARIOS, baseline)},
    ).metrics[0]


def test_accuracy_counts_labeled_decisions_of_the_kind_with_a_wilson_interval():
    m = decide([GOOD, CUT_OFF])
    # turn-taking: 3 right of 3 on the first call, 1 of 3 labeled on the second
    assert (m.value, m.n) == (pytest.approx(4 / 6), 6)
    low, high = proportion_confint(4, 6, method="wilson")
    assert m.interval == (pytest.approx(low), pytest.approx(high))
    assert not m.passed
    assert "1 unlabeled turn-taking decisions left out" in m.note
    cut = [e for e in m.evidence if "reviewers say 'wait'" in e.note]
    assert [(e.call, e.turn) for e in cut] == [("golden/b-c", 0), ("golden/b-c", 1)]
    assert decide([GOOD, GOOD]).passed


def test_every_kind_when_the_metric_names_none():
    m = decide([GOOD, GOOD], spec=g.MetricSpec(dg.DECISION_ACCURACY, threshold=0.8))
    assert (m.value, m.n) == (pytest.approx(6 / 8), 8)
    assert not m.passed and m.label == "decision accuracy: every kind"


def test_no_labeled_decision_never_passes():
    m = decide([[("turn-taking", T, "")], []])
    assert not m.passed and m.problems == [
        "no labeled turn-taking decisions on the golden-set calls"
    ]


def test_regression_against_the_baseline_with_a_tolerance():
    spec = g.MetricSpec(dg.DECISION_ACCURACY_REGRESSION, measure="turn-taking", tolerance=0.1)
    worse = decide([GOOD, CUT_OFF], baseline=[GOOD, GOOD], spec=spec)
    assert (worse.baseline, worse.value) == (1.0, pytest.approx(4 / 6))
    assert not worse.passed and worse.evidence
    assert decide([GOOD, GOOD], baseline=[GOOD, CUT_OFF], spec=spec).passed
    first = decide([GOOD, CUT_OFF], spec=spec)
    assert first.passed and "no baseline yet" in first.note


def test_pure_helpers():
    assert metrics.decision_accuracy([("a", "a"), ("a", "b"), ("b", "")]).value == 0.5
    rows = metrics.confusion_matrix({("t", "w"): 2, ("t", "t"): 5}, ["t", "w"])
    assert rows == [("t", [5, 2]), ("w", [0, 0])]
    assert metrics.histogram([-5, 0, 150, 200, 5000], [0, 200, 400]) == [1, 2, 1, 1]


@pytest.mark.django_db
def test_yaml_shape_names_the_kind_and_min():
    decision_kinds_import(text=KINDS_YAML)
    cleaned = metric_clean({"kind": "decision_accuracy", "decision": "turn-taking", "min": 0.8})
    assert (cleaned["measure"], cleaned["threshold"]) == ("turn-taking", 0.8)
    from evals.gating.models import GateMetric

    assert metric_as_yaml(GateMetric(**cleaned)) == {
        "kind": "decision_accuracy",
        "decision": "turn-taking",
        "min": 0.8,
    }
    for raw, message in [
        ({"kind": "decision_accuracy"}, "metric.min: missing"),
        ({"kind": "decision_accuracy", "min": 1.5}, "metric.min: an accuracy is at most 1"),
        ({"kind": "decision_accuracy", "min": 0.5, "decision": "nope"}, "metric.decision: no"),
        ({"kind": "decision_accuracy_regression"}, "metric.tolerance: missing"),
    ]:
        with pytest.raises(GateConfigInvalid, match=message):
            metric_clean(raw)


@pytest.mark.django_db
def test_a_gate_run_counts_the_labeled_decisions_of_the_golden_calls(world, lead):
    from django.test import Client

    from evals.decisions.models import Decision, DecisionKind
    from tests.factories import logged_in

    decision_kinds_import(text=KINDS_YAML)
    kind = DecisionKind.objects.get(kind_id="turn-taking")
    version = kind.versions.get()
    # one take decision per golden call (turn 2, 800 ms after the user); the newer version's
    # first call cut the candidate off, per the reviewers
    for name, t in world.calls.items():
        truth = W if name == "2026-11-28.1-0" else T
        Decision.objects.create(
            transcript=t,
            kind=kind,
            kind_version=version,
            key="turn:2",
            turn=2,
            choice=T,
            gap_ms=800,
            source="derived",
            truth=truth,
        )
    c = logged_in(Client(), lead)
    r = c.post(
        "/gates/release/metrics/add/",
        {"kind": "decision_accuracy", "measure": "turn-taking", "limit": "0.9"},
    )
    assert r.status_code == 302
    metric = world.gate.metrics.get(kind="decision_accuracy")
    assert (metric.measure, metric.threshold) == ("turn-taking", 0.9)
    page = c.get("/gates/release/").content.decode()
    assert "decision accuracy: turn-taking" in page and "Min for decision accuracy" in page

    old = world.run("2026-11-21.1")
    new = world.run("2026-11-28.1", "2026-11-21.1")
    result = {m["kind"]: m for m in new.results["metrics"]}["decision_accuracy"]
    assert {m["kind"]: m for m in old.results["metrics"]}["decision_accuracy"]["passed"]
    n = len([x for x in world.calls if x.startswith("2026-11-28.1")])
    assert result["value"] == pytest.approx((n - 1) / n) and result["baseline"] == 1.0
    assert not result["passed"] and new.status == "fail"
    assert result["evidence"][0]["call"] == "2026-11-28.1-0"
    assert result["evidence"][0]["turn"] == 2
