"""A rule version judged by one judge in both prompt orders and by another, with errored verdicts
of every kind: covered by another judge's marks, on a call whose verdicts contradict each other, on
a tied call, alone on its call, two on one call; weighted calls from the sample. Shared by the
calibration tests and the calibration page's browser test."""

import datetime as dt

from django.utils import timezone

from labeling import models as lm
from tests import factories as f

E = "err"
A, B, C = "pairwise/v1", "pairwise/v1@ba", "solo/v1"
# call: ({judge: what it said}, the truth (True broken) or None, inclusion probability or None)
SPEC = {
    "c0": ({A: True, B: True}, True, None),
    "c1": ({A: False, B: False}, False, None),
    "c2": ({A: True, B: False}, True, None),
    "c3": ({A: False, B: True}, False, None),
    "c4": ({A: E, B: True}, True, None),  # A errored; B's mark settles the call: broken
    "c5": ({A: True, B: E}, False, None),  # B errored; A's mark settles it: not broken
    "c6": ({A: E, B: E, C: True}, True, 0.5),  # both errored; C's mark (weight 2) settles it
    "c7": ({A: True, B: E, C: True}, "conflict", None),  # A marked right, C wrong: unsettled
    "c8": ({A: True, B: E}, "tie", None),  # A's marks tie: nothing settled
    "c9": ({A: E}, None, None),  # alone on its call: nothing settles it
    "c10": ({A: False, B: False}, False, 0.25),  # weight 4
}


def build_errors_world(reviewer, sam):
    """Create the calls, verdicts and marks of SPEC; return the rule version and the judges."""
    rv = f.RuleVersionFactory(rule=f.RuleFactory(rule_id="asking.one-question"), number=1)
    judges = {name: f.JudgeFactory(name=name) for name in (A, B, C)}
    sample = f.DailySampleFactory(day=dt.date(2026, 11, 2))
    now = timezone.now()
    for call, (said, truth, p) in SPEC.items():
        t = f.TranscriptFactory(external_id=call)
        assignment = {}
        if p is not None:
            item = f.SampleItemFactory(sample=sample, transcript=t, inclusion_probability=p)
            for who in (reviewer, sam):
                assignment[who] = lm.Assignment.objects.create(
                    item=item,
                    reviewer=who,
                    claimed_at=now,
                    lease_expires_at=now + dt.timedelta(minutes=45),
                    finished_at=now,
                )
        for name, answer in said.items():
            v = f.VerdictFactory(
                transcript=t,
                rule_version=rv,
                judge=judges[name],
                flagged=answer is True,
                turn=0 if answer is True else None,
                error="timeout" if answer == E else "",
            )
            if answer == E or truth is None:
                continue
            if truth == "conflict":
                right = name == A  # A flagged and was right; C flagged and was wrong
            elif truth == "tie":
                lm.Mark.objects.create(verdict=v, reviewer=sam, correct=False)
                right = True
            else:
                right = answer == truth
            lm.Mark.objects.create(
                verdict=v, reviewer=reviewer, correct=right, assignment=assignment.get(reviewer)
            )
    return {"rv": rv, "judges": judges}
