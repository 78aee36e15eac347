"""The eval_pass_rate gate metric: eval pass rates gate on no regression, never a threshold."""

import pytest
from django.utils import timezone

from evals.catalog.selectors import agent_version_resolve
from evals.evalruns import gate_metrics as eg
from evals.evalruns.models import Dataset, EvalRun
from evals.gating import decision as gates
from evals.gating import services as gating
from evals.gating.services import GateConfigInvalid

pytestmark = pytest.mark.django_db


def fact(pass_rate, run=1, dataset="booking-tools", rubric="tool_selection"):
    return eg.EvalRunFact(dataset=dataset, rubric=rubric, run=run, pass_rate=pass_rate)


def decide(candidate, baseline, tolerance=5.0):
    spec = gates.MetricSpec(kind=eg.EVAL_PASS_RATE, tolerance=tolerance)
    return gates.METRIC_KINDS[eg.EVAL_PASS_RATE].evaluate(
        gates.MetricInput(
            spec=spec,
            scope=[],
            candidate=[],
            baseline=None,
            scenarios=[],
            candidate_layers={eg.LAYER: tuple(candidate)},
            baseline_layers=None if baseline is None else {eg.LAYER: tuple(baseline)},
        )
    )


def test_a_drop_beyond_the_tolerance_fails_and_names_the_run():
    out = decide([fact(60.0, run=7)], [fact(70.0, run=3)])
    assert not out.passed and out.value == 60.0 and out.baseline == 70.0
    assert out.evidence[0].call == "eval run #7" and "down 10.0 points" in out.evidence[0].note
    assert decide([fact(66.0)], [fact(70.0)]).passed  # 4 points: within 5
    assert decide([fact(90.0)], [fact(70.0)]).passed  # better is fine


def test_no_absolute_threshold_and_missing_data_never_passes():
    first = decide([fact(10.0)], None)  # a low first score passes: nothing to regress against
    assert first.passed and "no baseline" in first.note
    nothing = decide([], [fact(70.0)])
    assert not nothing.passed and "no finished eval run" in nothing.problems[0]
    unscored = decide([fact(None)], [fact(70.0)])
    assert not unscored.passed and "scored no row" in unscored.problems[0]
    other = decide([fact(50.0, dataset="other")], [fact(70.0)])  # nothing comparable
    assert other.passed and "same datasets" in other.note


def test_metric_is_configured_with_a_tolerance_only(world):
    with pytest.raises(GateConfigInvalid, match="tolerance: missing"):
        gating.metric_clean({"kind": "eval_pass_rate"})
    with pytest.raises(GateConfigInvalid, match="max: not a field"):
        gating.metric_clean({"kind": "eval_pass_rate", "tolerance": 5, "max": 0.5})
    assert gating.metric_clean({"kind": "eval_pass_rate", "tolerance": 5})["tolerance"] == 5.0


def eval_run(version, pass_rate):
    dataset, _ = Dataset.objects.get_or_create(name="booking-tools", checksum="0" * 64)
    return EvalRun.objects.create(
        dataset=dataset,
        agent_version=version,
        rubric="tool_selection",
        status=EvalRun.Status.DONE,
        rows_scored=10,
        pass_rate=pass_rate,
        finished_at=timezone.now(),
    )


def test_a_gate_run_compares_the_candidates_eval_runs_with_the_baselines(world):
    gating.gate_metric_add(gate=world.gate, data={"kind": "eval_pass_rate", "tolerance": 5})
    old = agent_version_resolve("2026-11-21.1")
    new = agent_version_resolve("2026-11-28.1")
    eval_run(old, 80.0)
    eval_run(new, 90.0)  # an older run of the candidate, superseded by the next one
    worse = eval_run(new, 60.0)
    run = world.run("2026-11-28.1", baseline="2026-11-21.1")
    metric = next(m for m in run.results["metrics"] if m["kind"] == "eval_pass_rate")
    assert not metric["passed"] and run.status == "fail"
    assert metric["value"] == 60.0 and metric["baseline"] == 80.0
    assert metric["evidence"][0]["call"] == f"eval run #{worse.pk}"
