"""Demo step: outcome ratings for the past week, so the outcome trend and what predicts it show
after `make run`.

Every call reviewed in a past day's sample is rated by each reviewer who finished it, on the demo
agent's overall question: 5 less what really went wrong in it (demo/truth.json: each real fault by
its rule's severity, each timing or transcription signal), with a little seeded reviewer noise.
Two calls on which nothing was flagged are rated bad for a reason no rule names yet (the
"bad outcome, nothing flagged" list). Today's sample is left alone. Idempotent: does nothing
when the past days already have ratings.
"""

import random
from pathlib import Path

from django.db.models import Exists, OuterRef

from console.demo_data import DEMO_AGENT, demo_truth
from console.demo_history import _quiet, demo_past_days
from evals.catalog.models import Agent
from evals.judging.models import Verdict
from evals.rules.models import Rule
from labeling.models import BAD_AT_MOST, RATING_MAX, RATING_MIN, Assignment, OutcomeRating
from labeling.services.outcomes import outcome_question_default, outcome_rate

OUTCOME_SEED = "docket-demo-outcomes"
PENALTY = {"critical": 2.5, "major": 1.2, "minor": 0.6}
SIGNAL_PENALTY = 0.7
# Failures no rule names yet: what a reviewer heard on a call where nothing was flagged.
UNNAMED = [
    (
        1,
        "She asked twice what happens next and never got an answer; she sounded lost at the end.",
        "No next steps given",
    ),
    (
        2,
        (
            "The project deep-dive was rushed: three topics in two minutes, no follow-up on "
            "anything she said."
        ),
        "Rushed the deep-dive",
    ),
]
GOOD_FACTORS = [
    "Let the candidate finish every answer",
    "Clear agenda and pacing",
    "Good follow-up on the project",
    "Warm, plain language",
]


def _rating(truth: dict, external_id: str, severities: dict, rng: random.Random) -> tuple:
    """Return (rating, reason, the one thing) for a call from what really happened in it."""
    faults = [f for f in truth["faults"].get(external_id, []) if not f.get("subtle")]
    signals = truth["signals"].get(external_id, [])
    penalty = sum(PENALTY.get(severities.get(f["rule"], "minor"), 0.6) for f in faults)
    penalty += SIGNAL_PENALTY * len(signals)
    noise = rng.choice([-0.5, 0, 0, 0, 0.5])
    rating = max(RATING_MIN, min(RATING_MAX, round(RATING_MAX - penalty + noise)))
    worst = sorted(faults, key=lambda f: -PENALTY.get(severities.get(f["rule"], "minor"), 0))
    if worst:
        key_factor = f"Broke {worst[0]['rule']}"
    elif signals:
        key_factor = f"{signals[0]['kind'].replace('_', ' ')} at turn {signals[0]['turn']}"
    else:
        key_factor = rng.choice(GOOD_FACTORS)
    reason = ""
    if rating <= BAD_AT_MOST:
        named = ", ".join(f["rule"] for f in faults) or "timing problems"
        reason = f"Several problems the candidate noticed: {named}."
    return rating, reason, key_factor


def demo_outcomes_load(demo_dir: Path) -> str:
    """Rate the past days' reviewed calls (skipped when they already have ratings)."""
    days = demo_past_days()
    agent = Agent.objects.filter(name=DEMO_AGENT).first()
    if agent is None or not days:
        return "no past days of demo calls to rate"
    done = Assignment.objects.filter(
        item__sample__day__in=days, finished_at__isnull=False
    ).select_related("item__transcript", "reviewer")
    if OutcomeRating.objects.filter(assignment__in=done).exists():
        return f"outcome ratings already there ({OutcomeRating.objects.count()})"
    truth = demo_truth(demo_dir)
    severities = dict(Rule.objects.values_list("rule_id", "severity"))
    question = outcome_question_default(agent=agent)
    flagged = Verdict.objects.filter(
        transcript=OuterRef("item__transcript"), flagged=True, error=""
    )
    assignments = list(done.annotate(flagged=Exists(flagged)).order_by("item__sample__day", "pk"))
    # The calls where nothing was flagged, non-golden first: two of them get the unnamed failures.
    quiet = sorted(
        {a.item.transcript.external_id for a in assignments if not a.flagged},
        key=lambda ext: (ext.startswith("golden-"), ext),
    )
    unnamed = dict(zip(quiet, UNNAMED))
    rng = random.Random(OUTCOME_SEED)
    made = bad = 0
    with _quiet():
        for a in assignments:
            ext = a.item.transcript.external_id
            if ext in unnamed:
                rating, reason, key_factor = unnamed[ext]
            else:
                rating, reason, key_factor = _rating(truth, ext, severities, rng)
            row, _ = outcome_rate(
                reviewer=a.reviewer,
                transcript=a.item.transcript,
                rating=rating,
                reason=reason,
                key_factor=key_factor,
                question=question,
            )
            OutcomeRating.objects.filter(pk=row.pk).update(
                assignment=a, created_at=a.finished_at, updated_at=a.finished_at
            )
            made += 1
            bad += rating <= BAD_AT_MOST
    return (
        f"{made} outcome ratings on {len({a.item_id for a in assignments})} reviewed calls "
        f"of {len(days)} past days ({bad} bad, {len(unnamed)} with nothing flagged)"
    )
