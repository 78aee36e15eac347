"""The rule workbench's reads: the marked calls a draft is judged on and the probability each was
drawn with, what judging it would cost, and its result against the reviewers' truth.

Which calls: the calls whose verdict of the base version (by one judge) reviewers marked and whose
truth is settled (the majority of the marks, or a lead's settlement). Two strata, drawn with a
seeded simple random sample each:

- disagreements: the judge was wrong by the reviewers (a false positive or negative), or the
  reviewers split on it; drawn first, all of them when the size allows;
- the rest (the judge was right, unanimously): a uniform share fills the size.

A call in a stratum of N calls of which k were drawn has inclusion probability k / N. The figures
weigh each call by 1 / (that probability x its own in the daily sample), so they estimate what
the draft would score on every marked call, as calibration's weighted figures do.

The truth is the base version's: carried to the draft because its text only clarifies the rule.
When a lead says the draft changes the rule's meaning, nothing is scored against it and the result
shows only where the draft and the base version differ.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db.models import Count

from core import stats
from core.errors import DomainError
from core.parsing import whole_number
from evals.catalog.models import Transcript
from evals.judging.models import Judge, Verdict
from evals.judging.services.runs import JudgeRunPlan
from evals.rules.models import Rule, RuleVersion
from evals.rules.selectors import rule_version_current
from evals.workbench.models import DraftRun, DraftVerdict, RuleDraft
from evals.workbench.services import draft_plan, draft_run_finished
from labeling.models import VerdictTally

DISAGREEMENT = DraftVerdict.Stratum.DISAGREEMENT
REST = DraftVerdict.Stratum.REST
# Tally cell codes (labeling.models.VerdictTally.cell) of a settled verdict.
SETTLED_CELLS = {0: "fn", 1: "tn", 2: "fp", 3: "tp"}


def workbench_size_clean(value, *, field_name: str = "size") -> int:
    """Return how many calls to judge (DOCKET_WORKBENCH_CALLS when blank), or refuse."""
    if value in (None, ""):
        return settings.DOCKET_WORKBENCH_CALLS
    size = whole_number(value, field=field_name)
    if not 1 <= size <= settings.DOCKET_WORKBENCH_MAX_CALLS:
        raise DomainError(
            f"between 1 and {settings.DOCKET_WORKBENCH_MAX_CALLS} (DOCKET_WORKBENCH_MAX_CALLS)",
            field=field_name,
        )
    return size


@dataclass(frozen=True)
class MarkedCall:
    """A call whose base-version verdict reviewers marked, with its settled truth."""

    transcript_id: int
    verdict_id: int
    cell: str  # tp fp fn tn: the base verdict against the truth
    weight: float  # 1 / its inclusion probability in the daily sample (1 outside it)
    split: bool  # the reviewers did not all say the same

    @property
    def broken(self) -> bool:
        """The truth: the rule was broken on this call."""
        return self.cell in ("tp", "fn")

    @property
    def flagged(self) -> bool:
        return self.cell in ("tp", "fp")

    @property
    def disagreement(self) -> bool:
        return self.cell in ("fp", "fn") or self.split


def workbench_judges(base: RuleVersion) -> list[tuple[Judge, int]]:
    """Return the judges with settled marks on the base version, most marked first."""
    counts = (
        VerdictTally.objects.filter(rule_version_id=base.pk, cell__in=SETTLED_CELLS)
        .values("judge_id")
        .annotate(n=Count("verdict_id"))
    )
    by_id = {row["judge_id"]: row["n"] for row in counts}
    judges = Judge.objects.in_bulk(list(by_id))
    return sorted(((judges[j], n) for j, n in by_id.items()), key=lambda jn: (-jn[1], jn[0].name))


def workbench_base_judge(base: RuleVersion, judge: Judge | None = None) -> Judge | None:
    """Return the judge whose marked verdicts the draft is compared to: `judge`, else the one
    with the most settled marks on the base version (None when nobody marked it)."""
    if judge is not None:
        return judge
    judges = workbench_judges(base)
    return judges[0][0] if judges else None


def workbench_marked_calls(*, base: RuleVersion, judge: Judge) -> list[MarkedCall]:
    """Return the base version's marked calls by `judge` whose truth is settled."""
    rows = VerdictTally.objects.filter(
        rule_version_id=base.pk, judge_id=judge.pk, cell__in=SETTLED_CELLS
    ).values_list("verdict__transcript_id", "verdict_id", "cell", "weight", "n_marks", "n_right")
    return [
        MarkedCall(t, v, SETTLED_CELLS[cell], float(w), 0 < right < n)
        for t, v, cell, w, n, right in rows
    ]


@dataclass
class Selection:
    """The calls a run judges: (transcript id, stratum, inclusion probability) each."""

    calls: list[tuple[int, str, float]]
    size: int
    seed: str
    disagreements: int  # in the stratum
    disagreements_drawn: int
    rest: int
    rest_drawn: int

    def params(self) -> dict:
        return {
            "seed": self.seed,
            "disagreements": self.disagreements,
            "disagreements_drawn": self.disagreements_drawn,
            "rest": self.rest,
            "rest_drawn": self.rest_drawn,
        }


def workbench_draw(calls: list[MarkedCall], *, size: int, seed: str) -> Selection:
    """Draw up to `size` calls: the disagreements first (a simple random sample of them when they
    are more), then a simple random sample of the rest; each with its inclusion probability."""
    rng = random.Random(seed)
    first = sorted(c.transcript_id for c in calls if c.disagreement)
    rest = sorted(c.transcript_id for c in calls if not c.disagreement)
    k1 = min(size, len(first))
    k2 = min(size - k1, len(rest))
    drawn1 = rng.sample(first, k1)
    drawn2 = rng.sample(rest, k2)
    chosen = [(pk, DISAGREEMENT, k1 / len(first)) for pk in drawn1]
    chosen += [(pk, REST, k2 / len(rest)) for pk in drawn2]
    return Selection(chosen, size, seed, len(first), k1, len(rest), k2)


def _seed(draft: RuleDraft, judge: Judge, size: int) -> str:
    return f"docket-workbench:{draft.pk}:{judge.pk}:{size}"


@dataclass
class WorkbenchEstimate:
    """What a run of the draft would do, before anything runs."""

    draft: RuleDraft
    judge: Judge | None
    selection: Selection
    plan: JudgeRunPlan
    marked: int  # settled marked calls of the base version by this judge
    external_ids: dict = field(default_factory=dict)  # transcript pk -> its external id

    def calls(self) -> list[dict]:
        """Return which calls it would judge: id, stratum and inclusion probability, the
        disagreements first."""
        return [
            {"transcript": self.external_ids[pk], "stratum": stratum, "p": round(p, 6)}
            for pk, stratum, p in sorted(
                self.selection.calls, key=lambda c: (c[1] != DISAGREEMENT, self.external_ids[c[0]])
            )
        ]

    @property
    def over_cap(self) -> bool:
        return bool(self.plan.cost_cap) and self.plan.est_cost > self.plan.cost_cap

    def as_dict(self) -> dict:
        s, p = self.selection, self.plan
        return {
            "draft": self.draft.pk,
            "base_version": self.draft.base.number,
            "base_judge": self.judge.name if self.judge else None,
            "marked_calls": self.marked,
            "calls": len(s.calls),
            "disagreements": s.disagreements,
            "disagreements_drawn": s.disagreements_drawn,
            "rest": s.rest,
            "rest_drawn": s.rest_drawn,
            "judge_calls": p.calls,
            "cache_hits": p.cache_hits,
            "detector_checks": p.detector_items,
            "est_tokens_in": p.est_tokens_in,
            "est_tokens_out": p.est_tokens_out,
            "est_cost": str(p.est_cost),
            "cost_cap": str(p.cost_cap),
            "over_cap": self.over_cap,
            "model": p.model or None,
            "prompt_version": p.prompt_version or None,
            "selection": self.calls(),
        }


def workbench_estimate(
    *,
    draft: RuleDraft,
    size: int | None = None,
    judge: Judge | None = None,
    cost_cap: Decimal | None = None,
) -> WorkbenchEstimate:
    """Return which calls a run of the draft would judge and what it would cost."""
    size = workbench_size_clean(size)
    judge = workbench_base_judge(draft.base, judge)
    calls = workbench_marked_calls(base=draft.base, judge=judge) if judge else []
    selection = workbench_draw(calls, size=size, seed=_seed(draft, judge, size) if judge else "")
    transcripts = list(
        Transcript.objects.filter(pk__in=[c[0] for c in selection.calls])
        .only("pk", "checksum", "external_id")
        .order_by("pk")
    )
    plan = draft_plan(draft=draft, transcripts=transcripts, cost_cap=cost_cap)
    ids = {t.pk: t.external_id for t in transcripts}
    return WorkbenchEstimate(draft, judge, selection, plan, len(calls), ids)


# ---- the result ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One judge's answers on the compared calls against the truth: the raw confusion and its
    agreement figures, and the same weighted by 1 / inclusion probability (intervals on Kish's
    effective n), as calibration computes them (core.stats.judge_agreement)."""

    raw: stats.Confusion
    weighted: stats.Confusion
    figures: stats.JudgeAgreement
    w_figures: stats.JudgeAgreement

    tp = property(lambda self: int(self.raw.tp))
    fp = property(lambda self: int(self.raw.fp))
    fn = property(lambda self: int(self.raw.fn))
    tn = property(lambda self: int(self.raw.tn))
    precision = property(lambda self: self.figures.precision)
    recall = property(lambda self: self.figures.recall)
    agreement = property(lambda self: self.figures.accuracy)
    w_precision = property(lambda self: self.w_figures.precision)
    w_recall = property(lambda self: self.w_figures.recall)
    w_agreement = property(lambda self: self.w_figures.accuracy)
    w_f1 = property(lambda self: self.w_figures.f1)
    w_specificity = property(lambda self: self.w_figures.specificity)
    w_kappa = property(lambda self: self.w_figures.kappa)
    effective_n = property(lambda self: self.weighted.effective_n)

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def weights(self) -> dict:
        """The sum of weights in each cell."""
        w = self.weighted
        return {"tp": w.tp, "fp": w.fp, "fn": w.fn, "tn": w.tn}


def _side(rows: list[tuple[bool, bool, float]]) -> Side:
    """Score rows of (judge said flagged, the rule was broken, weight)."""
    judged = stats.confusion_from_rows(rows)
    return Side(
        raw=judged.raw,
        weighted=judged.weighted,
        figures=stats.judge_agreement(judged.raw),
        w_figures=stats.judge_agreement(judged.weighted),
    )


@dataclass(frozen=True)
class Flip:
    """A call where the draft and the base version answer differently."""

    transcript: str
    stratum: str
    now: str  # "agrees" (with the reviewers), "disagrees", or "unsettled" (no truth)
    current_flagged: bool
    current_turn: int | None
    current_rationale: str
    draft_flagged: bool
    draft_turn: int | None
    draft_rationale: str

    @property
    def turn(self) -> int | None:
        return self.draft_turn if self.draft_flagged else self.current_turn


@dataclass
class WorkbenchResult:
    """A run's result, side by side with the base version on the same calls."""

    draft_run: DraftRun
    finished: bool
    carried: bool  # the base's truth is carried (the draft only clarifies the rule)
    calls: int = 0
    judged: int = 0
    errored: int = 0
    unsettled: int = 0  # judged calls whose truth is no longer settled (a tie)
    compared: int = 0
    same: int = 0  # calls where the draft answers as the base version did
    current: Side | None = None
    draft: Side | None = None
    flips: list[Flip] = field(default_factory=list)

    @property
    def pending(self) -> int:
        return self.calls - self.judged

    @property
    def now_agree(self) -> int:
        return sum(1 for f in self.flips if f.now == "agrees")

    @property
    def now_disagree(self) -> int:
        return sum(1 for f in self.flips if f.now == "disagrees")

    @property
    def same_share(self) -> stats.Estimate:
        return stats.Estimate.of(self.same, self.compared)


def workbench_result(draft_run: DraftRun) -> WorkbenchResult:
    """Return the run's result: both judges' figures on the calls the draft answered, and the
    calls that flipped (one query for the draft's verdicts, one for the base's truth)."""
    draft = draft_run.draft
    result = WorkbenchResult(
        draft_run, draft_run_finished(draft_run), carried=not draft.changes_meaning
    )
    dvs = list(
        DraftVerdict.objects.filter(run=draft_run).select_related("transcript").order_by("pk")
    )
    result.calls = len(dvs)
    truth = {
        t: (cell, weight, verdict_id)
        for t, verdict_id, cell, weight in VerdictTally.objects.filter(
            rule_version_id=draft.base_id,
            judge_id=draft_run.base_judge_id,
            verdict__transcript_id__in=[dv.transcript_id for dv in dvs],
        ).values_list("verdict__transcript_id", "verdict_id", "cell", "weight")
    }
    current_rows, draft_rows, flipped = [], [], []
    for dv in dvs:
        if dv.judged_at is None:
            continue
        result.judged += 1
        if dv.error:
            result.errored += 1
            continue
        cell, weight, verdict_id = truth.get(dv.transcript_id, (None, 1.0, None))
        if verdict_id is None:
            result.unsettled += 1  # the base verdict lost its marks (a replaced call)
            continue
        current_flagged = cell in (2, 3)
        settled = cell in SETTLED_CELLS
        result.compared += 1
        result.same += current_flagged == dv.flagged
        if settled:
            broken = cell in (0, 3)
            w = float(weight) / dv.inclusion_probability
            current_rows.append((current_flagged, broken, w))
            draft_rows.append((bool(dv.flagged), broken, w))
        else:
            result.unsettled += 1
        if current_flagged != dv.flagged:
            now = "unsettled"
            if settled and result.carried:
                now = "agrees" if dv.flagged == (cell in (0, 3)) else "disagrees"
            flipped.append((dv, verdict_id, now, current_flagged))
    if result.carried and current_rows:
        result.current, result.draft = _side(current_rows), _side(draft_rows)
    base = Verdict.objects.in_bulk([v for _, v, _, _ in flipped])
    result.flips = [
        Flip(
            transcript=dv.transcript.external_id,
            stratum=dv.stratum,
            now=now,
            current_flagged=current_flagged,
            current_turn=base[v].turn if v in base else None,
            current_rationale=base[v].rationale if v in base else "",
            draft_flagged=bool(dv.flagged),
            draft_turn=dv.turn,
            draft_rationale=dv.rationale,
        )
        for dv, v, now, current_flagged in flipped
    ]
    result.flips.sort(key=lambda f: ({"agrees": 0, "disagrees": 1}.get(f.now, 2), f.transcript))
    return result


def draft_latest_run(draft: RuleDraft) -> DraftRun | None:
    """Return the draft's newest run."""
    return (
        DraftRun.objects.filter(draft=draft)
        .select_related("judge_run__judge", "base_judge", "draft__base__rule", "draft__rule")
        .order_by("-created_at", "-pk")
        .first()
    )


def draft_get(pk: int) -> RuleDraft | None:
    return (
        RuleDraft.objects.select_related(
            "rule", "base__rule", "saved_as", "created_by", "meaning_by"
        )
        .filter(pk=pk)
        .first()
    )


@dataclass
class DraftRow:
    """One draft in the rule's comparison table."""

    draft: RuleDraft
    run: DraftRun | None
    result: WorkbenchResult | None


def workbench_drafts(rule: Rule) -> list[DraftRow]:
    """Return the rule's drafts, newest first, each with its newest run's result."""
    rows = []
    drafts = RuleDraft.objects.filter(rule=rule).select_related(
        "rule", "base__rule", "saved_as", "created_by"
    )
    for draft in drafts.order_by("-created_at", "-pk"):
        run = draft_latest_run(draft)
        rows.append(DraftRow(draft, run, workbench_result(run) if run else None))
    return rows


def workbench_rules() -> list[tuple[Rule, int, RuleDraft | None]]:
    """Return the rules that have drafts: (rule, drafts, newest draft), newest first."""
    rules = Rule.objects.annotate(n=Count("drafts")).filter(n__gt=0).order_by("rule_id")
    out = []
    for rule in rules:
        newest = rule.drafts.order_by("-created_at", "-pk").first()
        out.append((rule, rule.n, newest))
    out.sort(key=lambda r: r[2].created_at, reverse=True)
    return out


def workbench_default_base(rule: Rule) -> RuleVersion | None:
    """Return the version a new draft is checked against by default: the newest version with
    settled marks, else the current one."""
    for rv in rule.versions.select_related("rule").order_by("-number"):
        if VerdictTally.objects.filter(rule_version_id=rv.pk, cell__in=SETTLED_CELLS).exists():
            return rv
    return rule_version_current(rule)


# ---- plain data (the API, the estimate kept on a saved version) --------------------------------


def _figure(est) -> list | None:
    if est.value is None:
        return None
    return [round(est.value, 4), round(est.ci[0], 4), round(est.ci[1], 4)]


def side_figures(side: Side) -> dict:
    """Return a side's figures as plain data: [value, low, high] each (None when undefined)."""
    return {
        "precision": _figure(side.w_precision),
        "recall": _figure(side.w_recall),
        "agreement": _figure(side.w_agreement),
        "f1": _figure(side.w_f1),
        "specificity": _figure(side.w_specificity),
        "judge_kappa": _figure(side.w_kappa),
        "effective_n": round(side.effective_n, 1),
        "weights": {cell: round(w, 4) for cell, w in side.weights.items()},
        "raw": {
            "tp": side.tp,
            "fp": side.fp,
            "fn": side.fn,
            "tn": side.tn,
            "precision": _figure(side.precision),
            "recall": _figure(side.recall),
            "agreement": _figure(side.agreement),
        },
    }


def _flip_data(f: Flip) -> dict:
    return {
        "transcript": f.transcript,
        "turn": f.turn,
        "stratum": f.stratum,
        "now": f.now,
        "current": {
            "flagged": f.current_flagged,
            "turn": f.current_turn,
            "rationale": f.current_rationale,
        },
        "draft": {"flagged": f.draft_flagged, "turn": f.draft_turn, "rationale": f.draft_rationale},
    }


def workbench_run_data(draft_run: DraftRun) -> dict:
    """Return a run's progress and result as plain data."""
    res = workbench_result(draft_run)
    jr = draft_run.judge_run
    return {
        "id": draft_run.pk,
        "judge_run": jr.pk if jr else None,
        "status": jr.status if jr else "failed",
        "stop_reason": jr.stop_reason if jr else "",
        "finished": res.finished,
        "judge": jr.judge.name if jr and jr.judge else None,
        "base_judge": draft_run.base_judge.name,
        "judged_as_version": draft_run.number,
        "size": draft_run.size,
        "selection": draft_run.params,
        "calls": res.calls,
        "judged": res.judged,
        "errored": res.errored,
        "unsettled": res.unsettled,
        "compared": res.compared,
        "same": res.same,
        "calls_made": jr.calls_made if jr else 0,
        "cache_hits": jr.cache_hits if jr else 0,
        "cost": str(jr.cost) if jr else "0",
        "carried": res.carried,
        "base_figures": side_figures(res.current) if res.current else None,
        "draft_figures": side_figures(res.draft) if res.draft else None,
        "now_agree": res.now_agree,
        "now_disagree": res.now_disagree,
        "flips": [_flip_data(f) for f in res.flips],
    }


def workbench_draft_data(draft: RuleDraft) -> dict:
    """Return a draft, with its newest run's progress and result, as plain data."""
    run = draft_latest_run(draft)
    return {
        "id": draft.pk,
        "rule": draft.rule.rule_id,
        "base_version": draft.base.number,
        "base_rule_version_id": draft.base_id,
        "text": draft.text,
        "detector": draft.detector,
        "model": draft.model or None,
        "prompt_version": draft.prompt_version or None,
        "note": draft.note,
        "source": draft.source,
        "issue_row": draft.issue_row,
        "changes_meaning": draft.changes_meaning,
        "meaning_reason": draft.meaning_reason,
        "saved_as_version": draft.saved_as.number if draft.saved_as_id else None,
        "created_by": draft.created_by.get_username() if draft.created_by_id else None,
        "created_at": draft.created_at,
        "run": workbench_run_data(run) if run else None,
    }
