"""The gate metrics of the decision layer. Pure: their facts (DecisionFact, per call, in
CallFacts.layers) are gathered by this app's gate source (evals.decisions.apps).

- `decision_accuracy`: the share of the agent's labeled decisions on the golden-set calls (of one
  decision kind, or all) that the reviewers' answer agrees with, at least `min`.
- `decision_accuracy_regression`: that share may be lower than the baseline's by at most
  `tolerance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.stats import wilson_interval as wilson
from evals.gating.decision import CallFacts, Evidence, MetricInput, MetricKind, MetricSpec, Outcome

LAYER = "decisions"
DECISION_ACCURACY = "decision_accuracy"
DECISION_ACCURACY_REGRESSION = "decision_accuracy_regression"


@dataclass(frozen=True)
class DecisionFact:
    """The agent's decision at one moment of a call, and the reviewers' answer ("" unlabeled)."""

    kind: str
    choice: str
    truth: str = ""
    turn: int | None = None
    ref: int | None = None  # decision id


def _decision_pairs(spec: MetricSpec, calls: Sequence[CallFacts]):
    """Return ([(call, decision)] labeled, how many unlabeled) for the metric's decision kind."""
    labeled, unlabeled = [], 0
    for c in calls:
        for d in c.layers.get(LAYER, ()):
            if spec.measure and d.kind != spec.measure:
                continue
            if d.truth:
                labeled.append((c, d))
            else:
                unlabeled += 1
    return labeled, unlabeled


def _accuracy(spec: MetricSpec, calls: Sequence[CallFacts], who: str = ""):
    """Return (accuracy, interval, n, problems, note, wrong [(call, decision)])."""
    labeled, unlabeled = _decision_pairs(spec, calls)
    what = f"{spec.measure} decisions" if spec.measure else "decisions"
    note = f"{who}{unlabeled} unlabeled {what} left out" if unlabeled else ""
    if not labeled:
        return None, None, 0, [f"{who}no labeled {what} on the golden-set calls"], note, []
    right = sum(1 for _, d in labeled if d.choice == d.truth)
    wrong = [(c, d) for c, d in labeled if d.choice != d.truth]
    return right / len(labeled), wilson(right, len(labeled)), len(labeled), [], note, wrong


def _decision_evidence(wrong) -> list[Evidence]:
    return [
        Evidence(
            call=c.call,
            turn=d.turn,
            note=f"{d.kind}: agent chose {d.choice!r}, reviewers say {d.truth!r}",
        )
        for c, d in wrong
    ]


def _decision_outcome(inp: MetricInput) -> tuple[Outcome, list]:
    value, interval, n, problems, note, wrong = _accuracy(inp.spec, inp.candidate)
    out = Outcome(passed=False, value=value, interval=interval, n=n, problems=problems, note=note)
    if inp.baseline is not None:
        out.baseline, out.baseline_interval, *_ = _accuracy(inp.spec, inp.baseline, "baseline ")
    return out, wrong


def _decision_accuracy(inp: MetricInput) -> Outcome:
    """The share of labeled golden-set decisions the agent got right, at least `min`."""
    out, wrong = _decision_outcome(inp)
    if out.value is None:
        return out
    out.passed = inp.spec.threshold is not None and out.value >= inp.spec.threshold - 1e-9
    if not out.passed:
        out.evidence = _decision_evidence(wrong)
    return out


def _decision_accuracy_regression(inp: MetricInput) -> Outcome:
    """Decision accuracy may be lower than the baseline's by at most `tolerance`."""
    out, wrong = _decision_outcome(inp)
    if out.value is None:
        return out
    if inp.baseline is None:
        out.passed = inp.spec.tolerance is not None
        out.note = "; ".join(
            filter(None, [out.note, "no baseline yet: nothing to regress against"])
        )
    elif out.baseline is None:
        out.problems.append("baseline has no labeled decisions to compare with")
    else:
        worse_by = out.baseline - out.value
        out.passed = inp.spec.tolerance is not None and worse_by <= inp.spec.tolerance + 1e-9
    if not out.passed:
        out.evidence = _decision_evidence(wrong)
    return out


DECISION_HELP = {
    "decision": "a decision kind id (turn-taking...); leave it out for every kind",
    "min": "the lowest accuracy that passes, 0 to 1",
    "max_at_most": "an accuracy is at most 1",
    "tolerance": "how much lower than the baseline's accuracy passes",
}


def _decision_label(s: MetricSpec) -> str:
    return f"decision accuracy: {s.measure or 'every kind'}"


KINDS = (
    # The decision kind goes in the spec's `measure` (the YAML's `decision`).
    MetricKind(
        name=DECISION_ACCURACY,
        title="decision accuracy (min)",
        evaluate=_decision_accuracy,
        label=_decision_label,
        fields=("decision", "min"),
        required=("min",),
        named="decision",
        help=DECISION_HELP,
        max_at_most=1.0,
    ),
    MetricKind(
        name=DECISION_ACCURACY_REGRESSION,
        title="decision accuracy vs baseline (tolerance)",
        evaluate=_decision_accuracy_regression,
        label=lambda s: _decision_label(s) + " vs baseline",
        fields=("decision", "tolerance"),
        required=("tolerance",),
        named="decision",
        help=DECISION_HELP,
    ),
)
