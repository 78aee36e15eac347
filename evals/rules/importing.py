"""Rules from the YAML (or JSON) file teams keep in git, and back."""

import logging
from typing import Any

import yaml

from core.import_kinds import ImportKind
from core.importing import ImportResult, VersionedConfig, versioned_import
from evals.rules.models import Rule, RuleVersion
from evals.rules.services import (
    RuleInvalid,
    detector_clean,
    group_clean,
    phase_clean,
    rule_create,
    rule_id_clean,
    rule_version_create,
    safety_clean,
    severity_clean,
    text_clean,
)

logger = logging.getLogger(__name__)

RULE_FIELDS = ("id", "group", "phase", "text", "severity", "safety", "detector", "status")


def _clean(item: Any) -> dict:
    if not isinstance(item, dict):
        raise RuleInvalid("rule", "expected a mapping with id, group and text")
    unknown = sorted(set(map(str, item)) - set(RULE_FIELDS))
    if unknown:
        raise RuleInvalid(unknown[0], f"unknown field (known: {', '.join(RULE_FIELDS)})")
    status = item.get("status") or Rule.Status.ACTIVE
    if status not in Rule.Status.values:
        raise RuleInvalid("status", f"{status!r} is not one of {', '.join(Rule.Status.values)}")
    return {
        "rule_id": rule_id_clean(item.get("id")),
        "group": group_clean(item.get("group")),
        "phase": phase_clean(item.get("phase")),
        "text": text_clean(item.get("text")),
        "severity": severity_clean(item.get("severity")),
        "safety": safety_clean(item.get("safety")),
        "detector": detector_clean(item.get("detector")),
        "status": status,
    }


def _rule_create(rule: dict, source: str) -> None:
    version = rule_create(
        rule_id=rule["rule_id"],
        group=rule["group"],
        text=rule["text"],
        severity=rule["severity"],
        safety=rule["safety"],
        phase=rule["phase"],
        detector=rule["detector"],
        source=source,
    )
    if rule["status"] != Rule.Status.ACTIVE:
        Rule.objects.filter(pk=version.rule_id).update(status=rule["status"])


def _latest(rules: list[Rule]) -> dict[int, RuleVersion]:
    latest = {}
    for v in RuleVersion.objects.filter(rule__in=rules).order_by("rule_id", "number"):
        latest[v.rule_id] = v
    return latest


RULES = VersionedConfig(
    kind="rules",
    list_key="rules",
    key="rule_id",
    clean=_clean,
    existing=lambda ids: {
        r.rule_id: r for r in Rule.objects.filter(rule_id__in=ids).select_for_update()
    },
    latest=_latest,
    create=_rule_create,
    settings=("group", "phase", "severity", "safety", "status"),
    same=lambda v, rule: v.text == rule["text"] and v.detector == rule["detector"],
    new_version=lambda rule, item, source: rule_version_create(
        rule=rule, text=item["text"], detector=item["detector"], source=source
    ),
)


def rules_import(*, text: str | bytes, source: str = "") -> ImportResult:
    """Import rules from YAML or JSON (text, or UTF-8 bytes): new rules get version 1, a changed
    text or detector gets version n+1 (a candidate), rule settings are updated in place, the rest
    is a no-op. Nothing is written unless every rule is valid."""
    result = versioned_import(RULES, text=text, source=source)
    logger.info("rules_imported", extra=result.log_extra(source))
    return result


def rules_export() -> str:
    """Return every rule with its newest version as YAML that imports back as a no-op."""
    latest = {}
    for v in RuleVersion.objects.order_by("rule_id", "number"):
        latest[v.rule_id] = v
    out = []
    for rule in Rule.objects.order_by("group", "rule_id"):
        version = latest.get(rule.pk)
        if version is None:
            continue
        item: dict[str, Any] = {"id": rule.rule_id, "group": rule.group}
        if rule.phase:
            item["phase"] = rule.phase
        item["text"] = version.text
        item["severity"] = rule.severity
        item["safety"] = rule.safety
        if version.detector is not None:
            item["detector"] = version.detector
        if rule.status != Rule.Status.ACTIVE:
            item["status"] = rule.status
        out.append(item)
    return yaml.safe_dump({"rules": out}, sort_keys=False, allow_unicode=True, width=100)


RULES_KIND = ImportKind(
    name="rules",
    label="Rules",
    formats="YAML (or JSON): a list of rules; a changed text is a new version, the rest unchanged",
    run=lambda *, lines, source, **_: rules_import(text=b"".join(lines), source=source),
    whole=True,
    command="import_rules",
    api="api-rules-import",
    order=20,
)
