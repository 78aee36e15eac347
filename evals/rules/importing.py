"""Rules from the YAML (or JSON) file teams keep in git, and back."""

import logging
from typing import Any

import yaml
from django.conf import settings
from django.db import transaction

from core import parsing
from core.importing import Errors, ImportResult
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


def _load(text: str | bytes, errors: Errors) -> tuple[list, list[dict]]:
    """Return the rule items and, for each, the line of the item and of each of its keys."""
    try:
        parsing.size_check(
            text, limit=settings.DOCKET_CONFIG_MAX_BYTES, setting="DOCKET_CONFIG_MAX_BYTES"
        )
        text = parsing.utf8(text)
        if text.lstrip()[:1] in ("{", "["):
            data = parsing.json_value(text)
            try:
                _, node = parsing.yaml_document(text)  # JSON is YAML: its lines, if it can tell
            except parsing.ParseProblem:
                node = None
        else:
            data, node = parsing.yaml_document(text)
    except parsing.ParseProblem as exc:
        errors.add(exc.line, exc.field, exc.reason)
        errors.check()
    if isinstance(data, dict) and set(data) <= {"rules"}:
        items = data.get("rules")
    elif isinstance(data, list):
        items = data
    else:
        items = None
    if not isinstance(items, list):
        errors.add(1, "rules", "expected a mapping with a `rules:` list (or a bare list of rules)")
        errors.check()
    return items, item_lines(node, len(items))


def item_lines(root: yaml.Node | None, count: int, list_key: str = "rules") -> list[dict]:
    """Best effort: line numbers of each item of the `key:` list and of its keys, from the YAML
    node tree."""
    fallback = [{"": f"item {i}"} for i in range(1, count + 1)]
    seq = root
    if isinstance(root, yaml.MappingNode):
        seq = next((v for k, v in root.value if getattr(k, "value", None) == list_key), None)
    if not isinstance(seq, yaml.SequenceNode) or len(seq.value) != count:
        return fallback
    lines = []
    for node in seq.value:
        entry = {"": str(node.start_mark.line + 1)}
        if isinstance(node, yaml.MappingNode):
            for key, _ in node.value:
                entry[str(key.value)] = str(key.start_mark.line + 1)
        lines.append(entry)
    return lines


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


def rules_import(*, text: str | bytes, source: str = "") -> ImportResult:
    """Import rules from YAML or JSON (text, or UTF-8 bytes): new rules get version 1, a changed
    text or detector gets version n+1 (a candidate), rule settings are updated in place, the rest
    is a no-op. Nothing is written unless every rule is valid."""
    errors = Errors(source)
    items, lines = _load(text, errors)
    cleaned: list[dict] = []
    seen: dict[str, str] = {}
    for item, where in zip(items, lines):
        try:
            rule = _clean(item)
        except RuleInvalid as exc:
            errors.add(where.get(exc.field.split(".")[0], where[""]), exc.field, exc.reason)
            continue
        if rule["rule_id"] in seen:
            errors.add(
                where.get("id", where[""]),
                "id",
                f"{rule['rule_id']} appears twice (first at {seen[rule['rule_id']]})",
            )
            continue
        seen[rule["rule_id"]] = where.get("id", where[""])
        cleaned.append(rule)
    errors.check()
    result = ImportResult(kind="rules")
    with transaction.atomic():
        existing = {
            r.rule_id: r for r in Rule.objects.filter(rule_id__in=list(seen)).select_for_update()
        }
        latest = {}
        for v in RuleVersion.objects.filter(rule__in=existing.values()).order_by(
            "rule_id", "number"
        ):
            latest[v.rule_id] = v
        for rule in cleaned:
            current = existing.get(rule["rule_id"])
            if current is None:
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
                result.created += 1
                continue
            changed_settings = [
                f
                for f in ("group", "phase", "severity", "safety", "status")
                if getattr(current, f) != rule[f]
            ]
            if changed_settings:
                for f in changed_settings:
                    setattr(current, f, rule[f])
                current.save(update_fields=changed_settings)
                result.updated += 1
            last = latest.get(current.pk)
            if last is None or last.text != rule["text"] or last.detector != rule["detector"]:
                rule_version_create(
                    rule=current, text=rule["text"], detector=rule["detector"], source=source
                )
                result.new_versions += 1
            elif not changed_settings:
                result.unchanged += 1
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
