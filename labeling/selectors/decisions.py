"""Reads for labeling decision points: the moments a reviewer labels on a call."""

import hashlib

from evals.catalog.models import Transcript
from evals.decisions.models import Decision
from labeling.models import DecisionLabel

MOMENTS_PER_CALL = 4  # decision points drawn from each sampled call, beside its hard moments


def _draw_key(decision_id: int) -> str:
    # A stable, spread-out order: the same call shows the same moments to every reviewer.
    return hashlib.sha256(f"decision-{decision_id}".encode()).hexdigest()


def review_moments(*, transcript: Transcript, reviewer) -> list[Decision]:
    """Return the decision points to label on a call, in call order: every hard moment queued on
    it, every one the reviewer labeled, and up to MOMENTS_PER_CALL more drawn by a stable hash.

    Each carries `answers` (its kind's, in order), `my_label` (the reviewer's, or None) and
    `hard_reason` ("" unless a lead queued it).
    """
    decisions = list(
        Decision.objects.filter(transcript=transcript)
        .select_related("kind", "kind_version", "hard_moment")
        .order_by("pk")
    )
    mine = {
        label.decision_id: label
        for label in DecisionLabel.objects.filter(
            decision__transcript=transcript, reviewer=reviewer
        )
    }
    chosen = {d.pk for d in decisions if d.pk in mine or hasattr(d, "hard_moment")}
    rest = sorted((d for d in decisions if d.pk not in chosen), key=lambda d: _draw_key(d.pk))
    chosen.update(d.pk for d in rest[:MOMENTS_PER_CALL])
    out = [d for d in decisions if d.pk in chosen]
    for d in out:
        d.answers = list(d.kind_version.answers)
        d.my_label = mine.get(d.pk)
        d.hard_reason = d.hard_moment.reason if hasattr(d, "hard_moment") else ""
    big = 10**9
    out.sort(key=lambda d: (d.at_ms if d.at_ms is not None else big, d.turn or 0, d.pk))
    return out
