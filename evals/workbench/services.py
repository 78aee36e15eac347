"""Rule drafts and their runs: make a draft, plan and start its judging on given calls, and the
judge-run item kind that judges one call (registered with judging in apps.py).

A draft of an LLM-judged rule is judged the way its text will be once it ships: in one call with
the current versions of the other rules of its group and phase, as the version number it would
take. So its answers sit in the judge's cache under the key an ordinary run of that version will
look up, and saving the draft as that version costs no second call on these calls. A detector
draft (new parameters) runs its detector in code, for free.

Only the draft's own answer is kept, in DraftVerdict: the siblings' answers in the same call stay
in the cache and are never written as their versions' verdicts, and the draft's verdict is never a
Verdict, which every sample, gate and figure of a released version counts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.errors import DomainError
from evals.catalog.models import Transcript
from evals.judging import prompt as jp
from evals.judging import registry
from evals.judging.client import judge_configured, judge_settings
from evals.judging.models import Judge, JudgeRun, JudgeRunItem
from evals.judging.services import runs as judging
from evals.rules.detectors import detector_judge
from evals.rules.models import Rule, RuleVersion
from evals.rules.selectors import rule_versions_current
from evals.rules.services import RuleInvalid, detector_clean, text_clean
from evals.workbench.models import DraftRun, DraftVerdict, RuleDraft

logger = logging.getLogger(__name__)

# The judge-run item kind of a draft judged on one call.
ITEM_KIND = "workbench"
NOTE_MAX = 500


class DraftInvalid(DomainError, ValueError):
    """A draft, or a run of one, was refused: says which field and why."""


def _is_detector(rv: RuleVersion) -> bool:
    return bool(rv.detector or rv.rule.detector)


def _base_detector(rv: RuleVersion) -> dict | None:
    return rv.detector or rv.rule.detector or None


@transaction.atomic
def draft_create(
    *,
    base: RuleVersion,
    text: str | None = None,
    detector: dict | None = None,
    model: str = "",
    prompt_version: str = "",
    note: str = "",
    source: str = "",
    issue_row: int | None = None,
    by=None,
) -> RuleDraft:
    """Make a draft of `base`'s rule: a new text (its own, for a judge change only), new detector
    parameters for a detector rule, or another judge model or prompt version. Raise DraftInvalid
    naming the field."""
    rule = base.rule
    if rule.status != Rule.Status.ACTIVE:
        raise DraftInvalid(f"rule {rule.rule_id} is retired", field="rule")
    if registry.judged_elsewhere(rule.group):
        raise DraftInvalid(
            f"the rules of group {rule.group!r} are judged by another judge than the rule judge; "
            "the workbench tries rule-judge and detector rules",
            field="rule",
        )
    text = text_clean(base.text if text is None else text)
    if _is_detector(base):
        try:
            spec = detector_clean(_base_detector(base) if detector is None else detector)
        except RuleInvalid as exc:
            raise DraftInvalid(exc.reason, field=exc.field) from None
        if model or prompt_version:
            raise DraftInvalid(
                f"{rule.rule_id} is a detector rule: it has no judge model", field="model"
            )
        if text == base.text.strip() and spec == _base_detector(base):
            raise DraftInvalid(
                f"unchanged from version {base.number}: change the text or a parameter",
                field="detector",
            )
        model = prompt_version = ""
    else:
        if detector is not None:
            raise DraftInvalid(
                f"{rule.rule_id} is judged by the LLM judge: a draft changes its text",
                field="detector",
            )
        spec = None
        named = bool(model or prompt_version)
        model = (model or judge_settings().model).strip()
        prompt_version = (prompt_version or jp.PROMPT_VERSION).strip()
        if not model or len(model) > 200 or "/" in model:
            raise DraftInvalid("a model name of at most 200 characters, without '/'", field="model")
        if prompt_version not in jp.PROMPT_VERSIONS:
            raise DraftInvalid(
                f"{prompt_version!r}: the judge runner knows {', '.join(jp.PROMPT_VERSIONS)}",
                field="prompt_version",
            )
        if text == base.text.strip() and not named:
            raise DraftInvalid(
                f"unchanged from version {base.number}: change the text, or name another judge "
                "model to see what the judge alone changes",
                field="text",
            )
    draft = RuleDraft.objects.create(
        rule=rule,
        base=base,
        text=text,
        detector=spec,
        model=model,
        prompt_version=prompt_version,
        note=(note or "").strip()[:NOTE_MAX],
        source=(source or "")[:200],
        issue_row=issue_row,
        created_by=by,
    )
    logger.info("rule_draft_created", extra={"draft": draft.pk, "rule": rule.rule_id})
    return draft


@transaction.atomic
def draft_meaning_set(*, draft: RuleDraft, changes_meaning: bool, reason: str = "", by=None):
    """Record a lead's word on whether the draft changes the rule's meaning (then the base's truth
    is not carried to it: no estimate from its marks). A version already saved from the draft
    keeps the word in its estimate."""
    draft = RuleDraft.objects.select_for_update().get(pk=draft.pk)
    reason = (reason or "").strip()[:NOTE_MAX]
    if changes_meaning and not reason:
        raise DraftInvalid("say how the text changes what the rule means", field="reason")
    draft.changes_meaning = bool(changes_meaning)
    draft.meaning_reason = reason
    draft.meaning_by = by
    draft.meaning_at = timezone.now()
    draft.save(update_fields=["changes_meaning", "meaning_reason", "meaning_by", "meaning_at"])
    logger.info(
        "rule_draft_meaning_set",
        extra={"draft": draft.pk, "changes_meaning": draft.changes_meaning},
    )
    return draft


def draft_siblings(draft: RuleDraft) -> list[RuleVersion]:
    """Return the current versions of the other LLM-judged rules of the draft's group and phase:
    the rules judged in the same call."""
    rule = draft.rule
    rules = Rule.objects.filter(
        status=Rule.Status.ACTIVE, group=rule.group, phase=rule.phase, detector__isnull=True
    ).exclude(pk=rule.pk)
    return sorted(
        (rv for rv in rule_versions_current(rules) if not _is_detector(rv)),
        key=lambda rv: rv.rule.rule_id,
    )


def _next_number(rule: Rule) -> int:
    return (rule.versions.aggregate(n=Max("number"))["n"] or 0) + 1


def _prompt_rule(draft: RuleDraft, number: int) -> jp.PromptRule:
    rule = draft.rule
    return jp.PromptRule(rule.rule_id, number, draft.text, rule.severity, rule.phase)


def draft_plan(
    *, draft: RuleDraft, transcripts: Sequence[Transcript], cost_cap: Decimal | None = None
) -> judging.JudgeRunPlan:
    """Return what judging the draft on these calls would do: judge calls after cache hits, their
    tokens and cost by the judge's own accounting, and the cost cap."""
    if draft.is_detector:
        cap = judging.judge_cost_cap(cost_cap)
        plan = judging.JudgeRunPlan(model="", prompt_version="", cost_cap=cap)
        plan.transcripts, plan.rule_versions = len(transcripts), 1
        plan.items = [
            judging.PlannedItem(t.pk, t.checksum, ITEM_KIND, "", "", (draft.base,))
            for t in transcripts
        ]
        plan.detector_items = len(plan.items)
        return plan
    siblings = draft_siblings(draft)
    probe = RuleVersion(rule=draft.rule, number=_next_number(draft.rule), text=draft.text)
    plan = judging._plan_pairs(
        [(t, [*siblings, probe]) for t in transcripts],
        model=draft.model,
        cost_cap=cost_cap,
        rule_versions=len(siblings) + 1,
        prompt_version=draft.prompt_version,
    )
    # The runner's items name released versions only: the siblings and the base (whose text the
    # item swaps for the draft's).
    plan.items = [
        replace(i, kind=ITEM_KIND, rule_versions=(*siblings, draft.base)) for i in plan.items
    ]
    return plan


@transaction.atomic
def draft_run_create(
    *,
    draft: RuleDraft,
    base_judge: Judge,
    calls: Sequence[tuple[int, str, float]],
    size: int,
    params: dict | None = None,
    by=None,
    cost_cap: Decimal | None = None,
    background: bool = False,
) -> DraftRun:
    """Judge the draft on `calls` ((transcript id, stratum, inclusion probability) each) through
    the judge runner; its items are queued after commit, as judge_run_create's are."""
    if not calls:
        raise DraftInvalid(
            f"no marked calls of version {draft.base.number} by {base_judge.name} to judge the "
            "draft on",
            field="calls",
        )
    transcripts = list(
        Transcript.objects.filter(pk__in=[c[0] for c in calls])
        .only("pk", "checksum", "external_id")
        .order_by("pk")
    )
    plan = draft_plan(draft=draft, transcripts=transcripts, cost_cap=cost_cap)
    if plan.calls and not judge_configured():
        raise DraftInvalid(
            f"no LLM judge is configured, and this run needs {plan.calls} judge calls: set "
            "JUDGE_BASE_URL (and JUDGE_API_KEY, JUDGE_MODEL) to an OpenAI-compatible server",
            field="judge",
        )
    number = _next_number(draft.rule)
    run = judging._run_record(
        plan,
        started_by=by.get_username() if by is not None else "",
        params={
            "rules": [draft.rule.rule_id],
            "transcripts": [t.external_id for t in transcripts],
            "workbench": {"draft": draft.pk, "base": draft.base.number, "number": number},
        },
    )
    if draft.is_detector:
        name, kind, model, prompt_version = detector_judge(draft.detector)
        run.judge, _ = Judge.objects.get_or_create(
            name=name, defaults={"kind": kind, "model": model, "prompt_version": prompt_version}
        )
        run.save(update_fields=["judge"])
    draft_run = DraftRun.objects.create(
        draft=draft,
        judge_run=run,
        base_judge=base_judge,
        number=number,
        size=size,
        params=dict(params or {}),
        created_by=by,
    )
    DraftVerdict.objects.bulk_create(
        [
            DraftVerdict(run=draft_run, transcript_id=pk, stratum=stratum, inclusion_probability=p)
            for pk, stratum, p in calls
        ],
        batch_size=1000,
    )
    if background and settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: judging._eager_in_thread(run.pk))
    else:
        transaction.on_commit(lambda: judging.judge_run_enqueue(run_id=run.pk))
    logger.info(
        "rule_draft_run_created",
        extra={"draft": draft.pk, "run": run.pk, "calls": len(calls), "judge_calls": plan.calls},
    )
    return draft_run


# ---- the item kind ----------------------------------------------------------------------------


def draft_item_run(item: JudgeRunItem, rvs: list[RuleVersion], turns) -> judging._Outcome:
    """Judge the draft on one call (or answer from the cache); its verdict goes in `extra`, so
    the runner writes no Verdict for it."""
    draft_run = DraftRun.objects.select_related("draft__rule", "draft__base").get(
        judge_run_id=item.run_id
    )
    draft = draft_run.draft
    if draft.is_detector:
        probe = RuleVersion(
            rule=draft.rule, number=draft_run.number, text=draft.text, detector=draft.detector
        )
        out = judging._run_detectors([probe], turns, item.transcript, run=item.run)
        fields = next(iter(out.verdicts.values()), None)
    else:
        _, _, judge = judging.item_llm_judge(item.run)
        rules = [judging._prompt_rule(rv) for rv in rvs if rv.rule_id != draft.rule_id]
        rules = sorted([*rules, _prompt_rule(draft, draft_run.number)], key=lambda r: r.rule_id)
        out = judging.rules_outcome(
            item,
            rules,
            turns,
            keys={r.rule_id: r.rule_id for r in rules},
            judges={draft.base_id: judge},
        )
        fields = out.verdicts.get(draft.rule.rule_id)
    judge = next(iter(out.judges.values()))
    return replace(
        out,
        verdicts={},
        judges={draft.base_id: judge},
        extra=None if fields is None else {"verdict": fields},
    )


def draft_verdict_put(item: JudgeRunItem, extra: dict, *, judge: Judge) -> int:
    """Write the draft's verdict on the item's call; return 1 when it is errored."""
    values = judging._verdict_values(extra["verdict"])
    values.pop("turn", None)
    turns = values.pop("turns")
    DraftVerdict.objects.filter(
        run__judge_run_id=item.run_id, transcript_id=item.transcript_id
    ).update(**values, turns=turns, turn=turns[0] if turns else None, judged_at=timezone.now())
    return 1 if values["error"] else 0


def draft_item_failed(item: JudgeRunItem, rvs: list[RuleVersion], error: str) -> judging._Outcome:
    """The outcome of a draft's item whose task gave up: an errored draft verdict, and no Verdict
    for the released versions the item names."""
    return judging._Outcome(
        JudgeRunItem.Outcome.ERROR,
        {},
        {item.pk: item.run.judge},
        error=error,
        extra={"verdict": {"error": error}},
    )


def draft_run_finished(draft_run: DraftRun) -> bool:
    """Whether the draft's judge run has ended (done, stopped or failed)."""
    run = draft_run.judge_run
    return run is None or run.finished_at is not None or run.status == JudgeRun.Status.FAILED


@transaction.atomic
def draft_saved(*, draft: RuleDraft, version: RuleVersion) -> RuleDraft:
    """Record that the draft became `version`."""
    RuleDraft.objects.filter(pk=draft.pk).update(saved_as=version)
    draft.saved_as = version
    return draft
