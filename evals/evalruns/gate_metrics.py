"""The gate metric of dataset evals, `eval_pass_rate`: for each dataset and rubric the candidate
has a finished eval run on, its pass rate may be below the baseline's by at most `tolerance`
points (no-regression only: rubric scores are fuzzy, so never an absolute threshold). Pure: its
facts (EvalRunFact, per agent version, in MetricInput.candidate_layers) are gathered by this
app's gate source (evals.evalruns.apps).
"""

from __future__ import annotations

from dataclasses import dataclass

from evals.gating.decision import Evidence, MetricInput, MetricKind, Outcome, listed

LAYER = "evalruns"
EVAL_PASS_RATE = "eval_pass_rate"


@dataclass(frozen=True)
class EvalRunFact:
    """An agent version's latest finished eval run on one dataset under one rubric."""

    dataset: str
    rubric: str
    run: int
    pass_rate: float | None  # percent of scored rows; None when nothing was scored
    scored: int = 0


def _eval_pass_rate(inp: MetricInput) -> Outcome:
    """Each dataset and rubric the candidate has an eval run on: its pass rate may be below the
    baseline's by at most `tolerance` points. Rubric scores are fuzzy, so there is no absolute
    threshold; a candidate without any eval run has nothing to show and fails."""
    tolerance = inp.spec.tolerance
    candidate = tuple(inp.candidate_layers.get(LAYER, ()))
    out = Outcome(passed=False, n=len(candidate))
    if not candidate:
        out.problems.append("the candidate has no finished eval run (python manage.py eval_run)")
        return out
    unscored = [f"{e.dataset} ({e.rubric}) run #{e.run}" for e in candidate if e.pass_rate is None]
    out.problems += listed([f"eval run scored no row: {u}" for u in unscored])
    scored = [e for e in candidate if e.pass_rate is not None]
    if scored:
        out.value = min(e.pass_rate for e in scored)
    if inp.baseline_layers is None:
        out.passed = tolerance is not None and not out.problems
        out.note = "no baseline yet: nothing to regress against"
        return out
    base = {
        (e.dataset, e.rubric): e
        for e in inp.baseline_layers.get(LAYER, ())
        if e.pass_rate is not None
    }
    compared, worst = [], None
    for e in scored:
        b = base.get((e.dataset, e.rubric))
        if b is None:
            continue
        drop = b.pass_rate - e.pass_rate
        compared.append(e)
        if worst is None or drop > worst[0]:
            worst = (drop, e, b)
        if tolerance is not None and drop > tolerance + 1e-9:
            out.evidence.append(
                Evidence(
                    call=f"eval run #{e.run}",
                    rule=f"{e.dataset} ({e.rubric})",
                    note=f"pass rate {e.pass_rate:.1f}% vs {b.pass_rate:.1f}% in baseline run "
                    f"#{b.run}: down {drop:.1f} points",
                )
            )
    if worst is not None:
        out.value, out.baseline = worst[1].pass_rate, worst[2].pass_rate
    if not compared:
        out.note = "the baseline has no eval run on the same datasets and rubrics"
    out.passed = tolerance is not None and not out.evidence and not out.problems
    return out


KIND = MetricKind(
    name=EVAL_PASS_RATE,
    title="eval pass rate vs baseline (tolerance)",
    evaluate=_eval_pass_rate,
    label=lambda s: "eval pass rate (every dataset and rubric run)",
    fields=("tolerance",),
    required=("tolerance",),
    help={"tolerance": "pass-rate points the candidate may lose to the baseline"},
)
