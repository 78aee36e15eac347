"""The rule workbench's writes: a draft (from a rule version, an issue row or the API), a run on
the base version's marked calls, a lead's word on the draft's meaning, and saving the draft as the
rule's next version with the figures it was estimated at."""

from __future__ import annotations

import logging
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from core.errors import Conflict, DomainError
from evals.judging.models import Judge
from evals.rules.models import RuleVersion
from evals.rules.selectors import rule_version_current
from evals.rules.services import rule_version_create
from evals.workbench.models import DraftRun, RuleDraft
from evals.workbench.services import (
    draft_create,
    draft_meaning_set,
    draft_run_create,
    draft_run_finished,
    draft_saved,
)
from labeling.models import IssueRow
from labeling.selectors.workbench import (
    draft_latest_run,
    side_figures,
    workbench_estimate,
    workbench_result,
)
from labeling.services.triage import issue_row_fix_rule

logger = logging.getLogger(__name__)


def workbench_draft_create(
    *,
    base: RuleVersion,
    text: str | None = None,
    detector: dict | None = None,
    model: str = "",
    prompt_version: str = "",
    note: str = "",
    row: IssueRow | None = None,
    source: str = "",
    by=None,
) -> RuleDraft:
    """Make a draft of `base`'s rule; from an issue row's "fix the rule", the row is kept, and
    saving the draft triages the row that way."""
    if row is not None:
        if row.rule_id is not None and row.rule_id != base.rule_id:
            raise DomainError(
                f"row {row.number} is about {row.rule.rule_id}, not {base.rule.rule_id}",
                field="rule",
            )
        source = f"issue row {row.number}"
    return draft_create(
        base=base,
        text=text,
        detector=detector,
        model=model,
        prompt_version=prompt_version,
        note=note,
        source=source,
        issue_row=row.number if row is not None else None,
        by=by,
    )


def workbench_run_start(
    *,
    draft: RuleDraft,
    size: int | None = None,
    judge: Judge | None = None,
    cost_cap: Decimal | None = None,
    by=None,
    background: bool = False,
) -> DraftRun:
    """Judge the draft on the calls its estimate names, through the ordinary judge runner."""
    estimate = workbench_estimate(draft=draft, size=size, judge=judge, cost_cap=cost_cap)
    if estimate.judge is None:
        raise DomainError(
            f"nobody has marked a verdict of {draft.rule.rule_id} v{draft.base.number} yet: "
            "there is no truth to judge the draft against",
            field="calls",
        )
    return draft_run_create(
        draft=draft,
        base_judge=estimate.judge,
        calls=estimate.selection.calls,
        size=estimate.selection.size,
        params=estimate.selection.params(),
        by=by,
        cost_cap=cost_cap,
        background=background,
    )


def _not_carried(draft: RuleDraft) -> dict:
    return {
        "from_version": draft.base.number,
        "carried": False,
        "reason": draft.meaning_reason,
        "by": draft.meaning_by.get_username() if draft.meaning_by else "",
        "at": (draft.meaning_at or timezone.now()).isoformat(),
        "draft": draft.pk,
    }


def workbench_version_estimate(draft: RuleDraft) -> dict | None:
    """Return what the version saved from the draft keeps: its figures estimated from the base
    version's marks on its newest finished run, or why the base's truth is not carried; None when
    it was never judged."""
    if draft.changes_meaning:
        return _not_carried(draft)
    run = draft_latest_run(draft)
    if run is None:
        return None
    result = workbench_result(run)
    if result.draft is None:
        return None
    return {
        "from_version": draft.base.number,
        "carried": True,
        "judge": run.base_judge.name,
        "draft_judge": run.judge_run.judge.name if run.judge_run and run.judge_run.judge else "",
        "draft": draft.pk,
        "run": run.pk,
        "calls": result.compared,
        "now_agree": result.now_agree,
        "now_disagree": result.now_disagree,
        "figures": side_figures(result.draft),
        "base_figures": side_figures(result.current),
        "at": timezone.now().isoformat(),
    }


@transaction.atomic
def workbench_draft_save(*, draft: RuleDraft, by) -> RuleVersion:
    """Make the draft the rule's next version (a candidate) through the ordinary rule-version
    service, keeping its workbench figures on it; a draft from an issue row triages the row as
    "fix the rule". Promotion still needs the version's own marks."""
    draft = (
        RuleDraft.objects.select_for_update(of=("self",))
        .select_related("rule", "base")
        .get(pk=draft.pk)
    )
    if draft.saved_as_id:
        raise Conflict(f"already saved as version {draft.saved_as.number}", field="draft")
    run = draft_latest_run(draft)
    if run is not None and not draft_run_finished(run):
        raise Conflict("its run is still judging: save it once the run ends", field="draft")
    current = rule_version_current(draft.rule)
    detector = draft.detector if draft.is_detector else (current.detector if current else None)
    if (
        current is not None
        and current.text.strip() == draft.text
        and detector == (current.detector or None)
    ):
        raise Conflict(
            f"version {current.number} already has this text: a judge change is not a rule version",
            field="text",
        )
    estimate = workbench_version_estimate(draft)
    if draft.issue_row is not None:
        row = IssueRow.objects.filter(number=draft.issue_row).first()
        if row is None:
            raise DomainError(f"issue row {draft.issue_row} is gone", field="issue_row")
        version = issue_row_fix_rule(
            row=row,
            actor=by,
            rule=draft.rule,
            text=draft.text,
            detector=detector,
            source=f" via workbench draft {draft.pk}",
            estimate=estimate,
        )
    else:
        version = rule_version_create(
            rule=draft.rule,
            text=draft.text,
            detector=detector,
            status=RuleVersion.Status.CANDIDATE,
            source=f"workbench draft {draft.pk}",
            estimate=estimate,
        )
    draft_saved(draft=draft, version=version)
    logger.info(
        "rule_draft_saved",
        extra={"draft": draft.pk, "rule": draft.rule.rule_id, "number": version.number},
    )
    return version


@transaction.atomic
def workbench_meaning_set(
    *, draft: RuleDraft, changes_meaning: bool, reason: str = "", by=None
) -> RuleDraft:
    """A lead says whether the draft changes the rule's meaning. If it does, the base version's
    truth is not carried: the draft is scored against nothing, and a version already saved from it
    keeps no estimate, only why."""
    draft = draft_meaning_set(draft=draft, changes_meaning=changes_meaning, reason=reason, by=by)
    if draft.saved_as_id:
        RuleVersion.objects.filter(pk=draft.saved_as_id).update(
            estimate=workbench_version_estimate(draft)
        )
    return draft
