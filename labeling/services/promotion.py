"""Promotion into the release gate and demotion out of it, by leads, with an audit record.

Promoting a rule version puts it in the gate and retires the rule's previously gated version in
the same transaction: the old version's text has been superseded, so it goes to `retired` (its
figures stay readable, and a lead may promote it back if it is still eligible). Demoting a gated
version sends it back to `candidate`: it keeps collecting marks and can be promoted again.
"""

import dataclasses
import logging

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.urls import reverse

from core.errors import Conflict, DomainError
from core.permissions import user_can
from evals.judging.models import Judge
from evals.rules.models import Rule, RuleVersion
from evals.webhooks.services import webhook_emit, webhook_link
from labeling.models import PromotionDecision
from labeling.selectors.calibration import calibration_row, floors_from_settings

logger = logging.getLogger(__name__)

REASON_MAX = 2000


class PromotionRefused(Conflict):
    """The rule version's state or figures refuse the promotion or demotion (409 over the API)."""

    code = "promotion_refused"


def _check(actor, reason: str) -> str:
    if not user_can(actor, "promote"):
        raise PermissionDenied(
            "Only leads (permission: promote) can promote or demote rule versions."
        )
    reason = (reason or "").strip()
    if not reason:
        raise DomainError("say why; the audit log keeps it with the figures.", field="reason")
    if len(reason) > REASON_MAX:
        raise DomainError(f"at most {REASON_MAX} characters, got {len(reason)}.", field="reason")
    return reason


def _figures(row) -> dict:
    figures = row.as_dict() if row is not None else {}
    figures["floors"] = dataclasses.asdict(floors_from_settings())
    return figures


def _lock(rule_version: RuleVersion) -> RuleVersion:
    # One promotion per rule at a time: lock the rule, then re-read the version under the lock.
    Rule.objects.select_for_update().get(pk=rule_version.rule_id)
    return RuleVersion.objects.select_related("rule").get(pk=rule_version.pk)


def _emit(decision: PromotionDecision, event: str) -> None:
    """Tell the webhooks subscribed to `event` (sent once the decision commits)."""
    rv = decision.rule_version
    figures = decision.figures or {}
    webhook_emit(
        event=event,
        payload={
            "rule": rv.rule.rule_id,
            "version": rv.number,
            "rule_version": rv.pk,
            "status": rv.status,
            "judge": decision.judge.name if decision.judge_id else None,
            "actor": decision.actor.get_username() if decision.actor_id else None,
            "reason": decision.reason,
            "decision": decision.pk,
            "replaced_version": decision.replaced.number if decision.replaced_id else None,
            "precision": figures.get("precision"),
            "recall": figures.get("recall"),
            "marked": figures.get("marked"),
            "url": webhook_link(reverse("calibration-detail", args=[rv.pk])),
        },
    )


@transaction.atomic
def rule_version_promote(
    *, rule_version: RuleVersion, actor, reason: str, judge: Judge | None = None
) -> PromotionDecision:
    """Put an eligible rule version in the gate, retiring
    the rule's gated version; return the decision.

    The figures are those of `judge`, or of the judge with the most marks on this version.
    Raises PromotionRefused naming why when the version is not eligible or cannot be promoted.
    """
    reason = _check(actor, reason)
    rv = _lock(rule_version)
    label = f"{rv.rule.rule_id} v{rv.number}"
    if rv.status == RuleVersion.Status.GATED:
        raise PromotionRefused(f"{label} is already in the gate.")
    if rv.status == RuleVersion.Status.DRAFT:
        raise PromotionRefused(f"{label} is a draft; a draft cannot be promoted.")
    row = calibration_row(rule_version=rv, judge=judge)
    if row is None:
        whom = f" by judge {judge.name}" if judge else ""
        raise PromotionRefused(f"{label} is not eligible for the gate: no marked verdicts{whom}.")
    if not row.eligible:
        raise PromotionRefused(f"{label} is not eligible for the gate: {'; '.join(row.why_not)}.")
    replaced = list(
        RuleVersion.objects.select_for_update().filter(
            rule_id=rv.rule_id, status=RuleVersion.Status.GATED
        )
    )
    for old in replaced:
        old.status = RuleVersion.Status.RETIRED
        old.save(update_fields=["status"])
    rv.status = RuleVersion.Status.GATED
    rv.save(update_fields=["status"])
    decision = PromotionDecision.objects.create(
        rule_version=rv,
        judge=row.judge,
        action=PromotionDecision.Action.PROMOTE,
        actor=actor,
        reason=reason,
        figures=_figures(row),
        replaced=replaced[0] if replaced else None,
    )
    _emit(decision, "rule_version.promoted")
    logger.info(
        "rule_version_promoted",
        extra={
            "rule_version_id": rv.pk,
            "judge_id": row.judge.pk,
            "actor_id": actor.pk,
            "replaced_id": replaced[0].pk if replaced else None,
            "decision_id": decision.pk,
        },
    )
    return decision


@transaction.atomic
def rule_version_demote(
    *, rule_version: RuleVersion, actor, reason: str, judge: Judge | None = None
) -> PromotionDecision:
    """Take a gated rule version out of the gate (back to candidate); return the decision."""
    reason = _check(actor, reason)
    rv = _lock(rule_version)
    if rv.status != RuleVersion.Status.GATED:
        raise PromotionRefused(
            f"{rv.rule.rule_id} v{rv.number} is not in the gate (status: {rv.status})."
        )
    row = calibration_row(rule_version=rv, judge=judge)
    rv.status = RuleVersion.Status.CANDIDATE
    rv.save(update_fields=["status"])
    decision = PromotionDecision.objects.create(
        rule_version=rv,
        judge=row.judge if row else judge,
        action=PromotionDecision.Action.DEMOTE,
        actor=actor,
        reason=reason,
        figures=_figures(row),
    )
    _emit(decision, "rule_version.demoted")
    logger.info(
        "rule_version_demoted",
        extra={"rule_version_id": rv.pk, "actor_id": actor.pk, "decision_id": decision.pk},
    )
    return decision
