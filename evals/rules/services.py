"""Rules and their immutable versions: create a rule, add a version."""

import logging
import re
from typing import Any

from django.db import transaction
from django.db.models import Max

from core.errors import DomainError
from evals.rules.detectors import detector_validate
from evals.rules.models import Rule, RuleVersion, Severity

logger = logging.getLogger(__name__)

RULE_ID_RE = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")
NAME_RE = re.compile(r"^[a-z0-9]+(?:[_-][a-z0-9]+)*$")
NEW_VERSION_STATUSES = (RuleVersion.Status.DRAFT, RuleVersion.Status.CANDIDATE)


class RuleInvalid(DomainError, ValueError):
    """A rule field failed validation; `field` names it, `reason` says why."""

    def __init__(self, field: str, reason: str):
        self.reason = reason
        super().__init__(reason, field=field)


def rule_id_clean(value: Any) -> str:
    """Return a valid rule id such as `opening.greet-by-name`, or raise RuleInvalid."""
    if not isinstance(value, str) or not value.strip():
        raise RuleInvalid("id", "missing (a rule needs a stable id such as opening.greet-by-name)")
    value = value.strip()
    if len(value) > 200:
        raise RuleInvalid("id", "longer than 200 characters")
    if not RULE_ID_RE.match(value):
        raise RuleInvalid(
            "id",
            f"{value!r} is not a rule id: use lower-case letters, digits, '.', '-' and '_' "
            "(e.g. opening.greet-by-name)",
        )
    return value


def _name_clean(field: str, value: Any, *, required: bool, max_length: int) -> str:
    if value is None or value == "":
        if required:
            raise RuleInvalid(field, "missing")
        return ""
    if not isinstance(value, str):
        raise RuleInvalid(field, f"must be a string, not {type(value).__name__}")
    value = value.strip()
    if len(value) > max_length:
        raise RuleInvalid(field, f"longer than {max_length} characters")
    if not NAME_RE.match(value):
        raise RuleInvalid(field, f"{value!r}: use lower-case letters, digits, '-' and '_'")
    return value


def group_clean(value: Any) -> str:
    """Return a valid rule group name (opening, asking, ... or any other slug)."""
    return _name_clean("group", value, required=True, max_length=100)


def phase_clean(value: Any) -> str:
    """Return a valid phase name, or "" when the rule applies to the whole call."""
    return _name_clean("phase", value, required=False, max_length=50)


def severity_clean(
    value: Any, *, field: str = "severity", default: str | None = Severity.MAJOR
) -> str:
    """Return minor, major or critical; `default` when the value is missing."""
    if value is None or value == "":
        if default is None:
            raise RuleInvalid(field, "missing")
        return default
    if value not in Severity.values:
        raise RuleInvalid(field, f"{value!r} is not one of {', '.join(Severity.values)}")
    return value


def safety_clean(value: Any) -> bool:
    """Return the safety flag (false when missing)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise RuleInvalid("safety", f"must be true or false, not {value!r}")
    return value


def text_clean(value: Any) -> str:
    """Return the rule text without surrounding whitespace; it must not be empty."""
    if not isinstance(value, str) or not value.strip():
        raise RuleInvalid("text", "missing (a rule version needs its text)")
    return value.strip()


def detector_clean(value: Any) -> dict | None:
    """Return the detector spec with its defaults filled in by the registry, or None."""
    if value is None:
        return None
    try:
        return detector_validate(value)
    except ValueError as exc:
        message = str(exc)
        field, _, reason = message.partition(": ")
        if not field.startswith("detector"):
            field, reason = "detector", message
        raise RuleInvalid(field, reason or message) from None


def _status_clean(status: str) -> str:
    if status not in NEW_VERSION_STATUSES:
        raise RuleInvalid(
            "status",
            f"a new version starts as draft or candidate, not {status!r} (promotion gates it)",
        )
    return status


@transaction.atomic
def rule_create(
    *,
    rule_id: str,
    group: str,
    text: str,
    severity: str = Severity.MAJOR,
    safety: bool = False,
    phase: str = "",
    detector: dict | None = None,
    status: str = RuleVersion.Status.CANDIDATE,
    source: str = "",
) -> RuleVersion:
    """Create a rule and its version 1; raise RuleInvalid naming the bad field."""
    rule_id = rule_id_clean(rule_id)
    if Rule.objects.filter(rule_id=rule_id).exists():
        raise RuleInvalid("id", f"rule {rule_id} already exists (add a version instead)")
    detector = detector_clean(detector)
    rule = Rule.objects.create(
        rule_id=rule_id,
        group=group_clean(group),
        phase=phase_clean(phase),
        severity=severity_clean(severity),
        safety=safety_clean(safety),
        detector=detector,
    )
    version = RuleVersion.objects.create(
        rule=rule,
        number=1,
        text=text_clean(text),
        detector=detector,
        status=_status_clean(status),
        source=source[:200],
    )
    logger.info("rule_created", extra={"rule": rule.rule_id, "rule_version_id": version.pk})
    return version


@transaction.atomic
def rule_version_create(
    *,
    rule: Rule,
    text: str,
    detector: dict | None = None,
    status: str = RuleVersion.Status.CANDIDATE,
    source: str = "",
    estimate: dict | None = None,
) -> RuleVersion:
    """Add version n+1 to a rule (numbers taken under a row lock on the rule); versions never
    change. `estimate`: the figures the rule workbench estimated for it from an earlier version's
    marks, kept with it."""
    text = text_clean(text)
    detector = detector_clean(detector)
    status = _status_clean(status)
    locked = Rule.objects.select_for_update().get(pk=rule.pk)
    last = locked.versions.aggregate(n=Max("number"))["n"] or 0
    version = RuleVersion.objects.create(
        rule=locked,
        number=last + 1,
        text=text,
        detector=detector,
        status=status,
        source=source[:200],
        estimate=estimate,
    )
    # The rule keeps a copy of its newest detector so lists can show which rules are detector rules.
    if locked.detector != detector:
        locked.detector = detector
        locked.save(update_fields=["detector"])
    rule.detector = detector
    logger.info(
        "rule_version_created",
        extra={"rule": locked.rule_id, "rule_version_id": version.pk, "number": version.number},
    )
    return version
