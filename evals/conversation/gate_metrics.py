"""The gate metric of the conversation layer, `conversation_score`: the mean 1-10 conversation
judge score of the golden-set calls must not be worse than the baseline's by more than
`tolerance`; the noise (the spread of the per-call differences and their mean's 95% interval) is
reported beside it. Pure: its facts (ConversationFact, per call, in CallFacts.layers) are
gathered by this app's gate source (evals.conversation.apps).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.stats import mean_interval
from evals.gating.decision import (
    Evidence,
    MetricInput,
    MetricKind,
    Outcome,
    listed,
    noise_note,
    paired_noise,
)

LAYER = "conversation"
CONVERSATION_SCORE = "conversation_score"


@dataclass(frozen=True)
class ConversationFact:
    """The conversation judge's score of one call (None with `error` when it failed)."""

    score: int | None
    error: str = ""
    findings: tuple[dict, ...] = ()  # {"type", "check", "turns", "note"}


def _conversation_scores(calls, who=""):
    """Return ({scenario: score}, problems) for calls' conversation scores."""
    scores, problems = {}, []
    for c in calls:
        f = c.layers.get(LAYER)
        if f is None:
            problems.append(f"{who}call {c.call} ({c.scenario}): no conversation score")
        elif f.error or f.score is None:
            problems.append(f"{who}call {c.call} ({c.scenario}): conversation score errored")
        else:
            scores[c.scenario] = float(f.score)
    return scores, listed(problems)


def _conversation_score(inp: MetricInput) -> Outcome:
    """The mean conversation score may be worse than the baseline's by at most `tolerance`."""
    spec = inp.spec
    scores, problems = _conversation_scores(inp.candidate)
    vals = list(scores.values())
    out = Outcome(passed=False, n=len(vals), problems=problems, interval=mean_interval(vals))
    if not vals:
        out.problems.append("no golden-set call has a conversation score")
        return out
    out.value = sum(vals) / len(vals)
    if inp.baseline is None:
        out.passed = spec.tolerance is not None
        out.note = "no baseline yet: nothing to regress against"
        return out
    base, bproblems = _conversation_scores(inp.baseline, "baseline ")
    present = {c.scenario for c in inp.baseline}
    out.problems += bproblems + listed(
        [
            f"baseline has no call for scenario {s} (replay the baseline on it, "
            "or name another baseline)"
            for s in inp.scenarios
            if s not in present
        ]
    )
    if not base:
        return out
    bvals = list(base.values())
    out.baseline, out.baseline_interval = sum(bvals) / len(bvals), mean_interval(bvals)
    paired = [s for s in inp.scenarios if s in scores and s in base]
    out.noise = paired_noise([scores[s] - base[s] for s in paired])
    out.note = noise_note(out.noise)
    out.passed = spec.tolerance is not None and out.baseline - out.value <= spec.tolerance + 1e-9
    if not out.passed:
        base_calls = {c.scenario: c for c in inp.baseline}
        for c in inp.candidate:
            if c.scenario not in paired or scores[c.scenario] >= base[c.scenario]:
                continue
            note = (
                f"score {scores[c.scenario]:g} vs {base[c.scenario]:g} "
                f"in baseline {base_calls[c.scenario].call}"
            )
            fact = c.layers.get(LAYER)
            findings = (fact.findings if fact else ()) or ({},)
            for f in findings:
                for t in f.get("turns") or (None,):
                    out.evidence.append(
                        Evidence(
                            call=c.call,
                            turn=t,
                            note=f"{f['type'].replace('_', ' ')}: {note}" if f else note,
                        )
                    )
    return out


KIND = MetricKind(
    name=CONVERSATION_SCORE,
    title="conversation score vs baseline (tolerance)",
    evaluate=_conversation_score,
    label=lambda s: "conversation score (1-10, whole-call judge)",
    fields=("tolerance",),
    required=("tolerance",),
    help={"tolerance": "how many points lower than the baseline's mean passes"},
)
