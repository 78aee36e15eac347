"""A known set of verdicts and marks, and its expected
figures computed with scikit-learn and statsmodels."""

import datetime as dt
import warnings
from dataclasses import dataclass, field

import numpy as np
from django.utils import timezone
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score
from statsmodels.stats.proportion import proportion_confint

from labeling import models as lm
from tests import factories as f

R, W = True, False  # a reviewer's mark: right, wrong

# (count, flagged, marks, settlement, errored, inclusion
# probability or None for outside the sample, week)
SPEC_A = [
    (12, True, [R], None, False, 0.5, 0),
    (3, True, [W], None, False, 0.25, 0),
    (4, False, [W], None, False, 1.0, 1),
    (15, False, [R], None, False, 0.5, 1),
    (2, True, [R, R], None, False, 0.5, 1),
    (1, True, [R, W, R], None, False, 0.25, 1),
    (1, False, [R, W], None, False, 0.5, 2),  # tie: waiting
    (1, True, [W, R], W, False, 0.5, 2),  # tie settled wrong: FP
    (1, False, [W, W], None, False, 1.0, 2),
    (2, True, [R], None, True, 0.5, 2),  # errored: excluded
    (2, False, [R], None, False, None, 2),  # outside the sample: weight 1
    (1, True, [R], None, False, None, 2),
]
# The same rule version judged by a second judge, a few marks.
SPEC_A_J2 = [(3, True, [R], None, False, 0.5, 0), (2, False, [W], None, False, 0.5, 0)]
# A safety rule with good figures but few marks.
SPEC_B = [(6, True, [R], None, False, 0.5, 0), (6, False, [R], None, False, 0.5, 0)]

WEEK0 = dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC)  # a Monday


@dataclass
class Expected:
    y_true: list = field(default_factory=list)  # rule broken (the truth)
    y_pred: list = field(default_factory=list)  # judge flagged
    w: list = field(default_factory=list)
    first: list = field(default_factory=list)
    second: list = field(default_factory=list)
    waiting: int = 0
    errored: int = 0
    outside: int = 0
    weeks: dict = field(default_factory=dict)

    def counts(self):
        pairs = list(zip(self.y_pred, self.y_true))
        return {
            "tp": sum(1 for p, t in pairs if p and t),
            "fp": sum(1 for p, t in pairs if p and not t),
            "fn": sum(1 for p, t in pairs if not p and t),
            "tn": sum(1 for p, t in pairs if not p and not t),
        }

    def figures(self):
        """Return the figures computed by the reference
        libraries, rounded as the API rounds them."""
        c = self.counts()
        yt, yp, w = np.array(self.y_true), np.array(self.y_pred), np.array(self.w)

        def ci(k, n):
            return [round(x, 4) for x in proportion_confint(k, n, alpha=0.05, method="wilson")]

        def n_eff(mask):
            ww = w[mask]
            return ww.sum() ** 2 / (ww**2).sum()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kappa = cohen_kappa_score(self.first, self.second) if self.first else None
        return {
            **c,
            "marked": sum(c.values()),
            "precision": round(precision_score(yt, yp), 4),
            "precision_ci": ci(c["tp"], c["tp"] + c["fp"]),
            "recall": round(recall_score(yt, yp), 4),
            "recall_ci": ci(c["tp"], c["tp"] + c["fn"]),
            "f1": round(f1_score(yt, yp), 4),
            "specificity": round(recall_score(yt, yp, pos_label=False), 4),
            "specificity_ci": ci(c["tn"], c["tn"] + c["fp"]),
            "w_precision": round(precision_score(yt, yp, sample_weight=w), 4),
            "w_recall": round(recall_score(yt, yp, sample_weight=w), 4),
            "w_f1": round(f1_score(yt, yp, sample_weight=w), 4),
            "effective_n": round(w.sum() ** 2 / (w**2).sum(), 1),
            "w_precision_n": n_eff(yp),
            "w_recall_n": n_eff(yt),
            "kappa": None if kappa is None or np.isnan(kappa) else round(kappa, 4),
            "agreement": round(float(np.mean(np.array(self.first) == np.array(self.second))), 4)
            if self.first
            else None,
            "pairs": len(self.first),
            "waiting": self.waiting,
            "errored": self.errored,
            "outside_sample": self.outside,
        }


def _build(spec, rule_version, judge, reviewers, sample, expected: Expected, lead):
    for count, flagged, marks, settlement, errored, p, week in spec:
        for _ in range(count):
            transcript = f.TranscriptFactory(started_at=WEEK0 + dt.timedelta(weeks=week))
            verdict = f.VerdictFactory(
                transcript=transcript,
                rule_version=rule_version,
                judge=judge,
                flagged=flagged,
                turn=0 if flagged else None,
                error="timeout" if errored else "",
                rationale="Asked two questions." if flagged else "One question each turn.",
            )
            item = None
            if p is not None:
                item = f.SampleItemFactory(
                    sample=sample, transcript=transcript, inclusion_probability=p
                )
            for i, correct in enumerate(marks):
                assignment = None
                if item is not None:
                    assignment = lm.Assignment.objects.create(
                        item=item,
                        reviewer=reviewers[i],
                        claimed_at=timezone.now(),
                        lease_expires_at=timezone.now() + dt.timedelta(minutes=45),
                        finished_at=timezone.now(),
                    )
                lm.Mark.objects.create(
                    verdict=verdict,
                    reviewer=reviewers[i],
                    correct=correct,
                    assignment=assignment,
                    note="clarifier, not a second question" if not correct else "",
                )
            if settlement is not None:
                lm.Settlement.objects.create(
                    verdict=verdict, correct=settlement, settled_by=lead, reason="listened"
                )
            if errored:
                expected.errored += 1
                continue
            if len(marks) >= 2:
                expected.first.append(marks[0])
                expected.second.append(marks[-1])
            right = sum(marks)
            truth = (
                settlement
                if settlement is not None
                else (True if 2 * right > len(marks) else False if 2 * right < len(marks) else None)
            )
            if truth is None:
                expected.waiting += 1
                continue
            broken = flagged if truth else not flagged
            expected.y_true.append(broken)
            expected.y_pred.append(flagged)
            expected.w.append(1 / p if p else 1.0)
            expected.outside += p is None
            wk = expected.weeks.setdefault(week, Expected())
            wk.y_true.append(broken)
            wk.y_pred.append(flagged)
            wk.w.append(1 / p if p else 1.0)


def build_known_set(lead=None):
    """Create the known set; return the rule versions,
    judges and Expected per (rule version, judge)."""
    lead = lead or f.UserFactory(roles=["lead"], username="known-lead")
    reviewers = [f.UserFactory(roles=["reviewer"], username=f"known-rev{i}") for i in range(3)]
    sample = f.DailySampleFactory(day=dt.date(2026, 11, 2))
    j1 = f.JudgeFactory(name="gpt-4o-mini/conduct-v3")
    j2 = f.JudgeFactory(name="gpt-4.1/conduct-v4")
    rule_a = f.RuleFactory(rule_id="asking.one-question", group="asking")
    rv_a = f.RuleVersionFactory(rule=rule_a, number=2)
    rule_b = f.RuleFactory(
        rule_id="boundaries.no-rubric-leak", group="boundaries", safety=True, severity="critical"
    )
    rv_b = f.RuleVersionFactory(rule=rule_b, number=1, text="Never reveal the rubric.")
    exp_a, exp_a2, exp_b = Expected(), Expected(), Expected()
    _build(SPEC_A, rv_a, j1, reviewers, sample, exp_a, lead)
    _build(SPEC_A_J2, rv_a, j2, reviewers, sample, exp_a2, lead)
    _build(SPEC_B, rv_b, j1, reviewers, sample, exp_b, lead)
    return {
        "rv_a": rv_a,
        "rv_b": rv_b,
        "j1": j1,
        "j2": j2,
        "lead": lead,
        "expected": {(rv_a.pk, j1.pk): exp_a, (rv_a.pk, j2.pk): exp_a2, (rv_b.pk, j1.pk): exp_b},
    }


def make_marked(rule_version, judge, reviewer, *, tp=0, fp=0, fn=0, tn=0):
    """Bulk-create marked verdicts (one mark each,
    outside the sample) with these confusion counts."""
    from evals.catalog.models import Transcript
    from evals.judging.models import Verdict

    av = f.AgentVersionFactory()
    start = Transcript.objects.count()
    specs = (
        [(True, True)] * tp + [(True, False)] * fp + [(False, False)] * fn + [(False, True)] * tn
    )
    transcripts = Transcript.objects.bulk_create(
        [
            Transcript(
                external_id=f"bulk-{rule_version.pk}-{judge.pk}-{start + i}",
                agent_version=av,
                checksum=f"{i:064x}",
            )
            for i in range(len(specs))
        ]
    )
    verdicts = Verdict.objects.bulk_create(
        [
            Verdict(
                transcript=t,
                rule_version=rule_version,
                judge=judge,
                flagged=flagged,
                turn=0 if flagged else None,
            )
            for t, (flagged, _) in zip(transcripts, specs)
        ]
    )
    lm.Mark.objects.bulk_create(
        [
            lm.Mark(verdict=v, reviewer=reviewer, correct=correct)
            for v, (_, correct) in zip(verdicts, specs)
        ]
    )
    return verdicts
