"""Triage of issue rows: assign, status, duplicates, comments, and the three ways out.

Every change writes one IssueRowEvent carrying the old and new value of each field it touched.
"""

import logging

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction

from core.errors import DomainError
from core.permissions import user_can
from evals.rules.detectors import DETECTORS, detector_validate
from evals.rules.models import Rule, RuleVersion, Severity
from evals.rules.selectors import rule_version_current
from evals.rules.services import rule_create, rule_version_create
from labeling.models import IssueRow, IssueRowEvent
from labeling.selectors.issue_rows import issue_row_signal_prefill

logger = logging.getLogger(__name__)

Status = IssueRow.Status
Outcome = IssueRow.Outcome

CLOSED = {Status.RESOLVED, Status.WONT_FIX}
MAX_DUPLICATE_CHAIN = 1000


class TriageError(DomainError, ValueError):
    """Bad triage input; `field` names the form field or API key at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(message, field=field)


def _require_triage(actor) -> None:
    if not user_can(actor, "triage"):
        raise PermissionDenied("Triage needs the triage permission.")


def _value(value):
    """Return a JSON-friendly form of a field value for the history."""
    if isinstance(value, IssueRow):
        return value.number
    if isinstance(value, RuleVersion):
        return f"{value.rule.rule_id} v{value.number}"
    if isinstance(value, Rule):
        return value.rule_id
    if hasattr(value, "get_username"):
        return value.get_username()
    return value


def _locked(row: IssueRow) -> IssueRow:
    """Lock the row and reload the caller's instance in place, so it sees every change made here."""
    row.refresh_from_db(from_queryset=IssueRow.objects.select_for_update(of=("self",)))
    return row


def _change(row: IssueRow, actor, kind: str, changes: dict, **extra) -> IssueRowEvent | None:
    """Apply `changes` (field -> new value) to the locked row, save, and record one event."""
    diff = {}
    for field, new in changes.items():
        old = getattr(row, field)
        if old != new:
            diff[field] = [_value(old), _value(new)]
            setattr(row, field, new)
    if not diff and not extra:
        return None
    if diff:
        row.save(update_fields=[*diff.keys(), "updated_at"])
    event = IssueRowEvent.objects.create(
        row=row, actor=actor, kind=kind, data={"changes": diff, **extra}
    )
    logger.info("issue_row_triage", extra={"row": row.number, "kind": kind, "actor": actor.pk})
    return event


def _open_for_a_way(row: IssueRow) -> None:
    if row.status in CLOSED:
        raise TriageError(
            "status", f"row {row.number} is {row.get_status_display()}; reopen it first"
        )


def _way_changes(row: IssueRow, outcome: str, **links) -> dict:
    changes = {"outcome": outcome, "duplicate_of": None, "reason": "", **links}
    if row.status == Status.NEW:
        changes["status"] = Status.TRIAGED
    return changes


def _required(field: str, value: str, max_length: int | None = None) -> str:
    value = (value or "").strip()
    if not value:
        raise TriageError(field, "required")
    if max_length and len(value) > max_length:
        raise TriageError(field, f"at most {max_length} characters")
    return value


def _severity(value: str) -> str:
    if value not in Severity.values:
        raise TriageError(
            "severity", f"unknown severity {value!r} (one of {', '.join(Severity.values)})"
        )
    return value


def _rule_error(exc: Exception) -> TriageError:
    """Turn an error from the rule services into a TriageError naming the field."""
    if isinstance(exc, TriageError):
        return exc
    if hasattr(exc, "field") and hasattr(exc, "reason"):  # evals.rules.services.RuleInvalid
        return TriageError({"id": "rule_id"}.get(exc.field, exc.field), exc.reason)
    if isinstance(exc, DomainError) and exc.field:
        return TriageError({"id": "rule_id"}.get(exc.field, exc.field), exc.message)
    message = str(exc)
    field, sep, rest = message.partition(":")
    if sep and field.strip() in {"rule_id", "group", "text", "severity", "phase", "detector"}:
        return TriageError(field.strip(), rest.strip())
    return TriageError("rule", message)


def detector_spec_from_form(name: str, data) -> dict:
    """Return a detector spec from form fields `param_<detector>_<param>`, typed by the registry."""
    detector = DETECTORS.get(name)
    if detector is None:
        known = ", ".join(sorted(DETECTORS)) or "none registered"
        raise TriageError("detector", f"pick a detector (known: {known})")
    spec: dict = {"name": name}
    for param in detector.params:
        raw = (data.get(f"param_{name}_{param}") or "").strip()
        if raw == "":
            continue
        kind = detector.types.get(param, str)
        try:
            if kind is bool:
                if raw.lower() not in {"true", "false", "on", "off", "yes", "no", "1", "0"}:
                    raise ValueError
                spec[param] = raw.lower() in {"true", "on", "yes", "1"}
            elif kind is int:
                spec[param] = int(raw)
            elif kind is float:
                spec[param] = float(raw)
            elif kind is list:
                spec[param] = [v.strip() for v in raw.split(",") if v.strip()]
            else:
                spec[param] = raw
        except ValueError:
            raise TriageError(f"detector.{param}", f"{raw!r} is not {kind.__name__}") from None
    return spec


def assignee_resolve(username: str):
    """Return the user to assign by username (None when blank); an unknown name is a TriageError."""
    if not username:
        return None
    assignee = get_user_model().objects.filter(username=username).first()
    if assignee is None:
        raise TriageError("assignee", f"no user {username!r}")
    return assignee


def duplicate_target_resolve(number: int) -> IssueRow:
    """Return the row with this number, the one a duplicate
    points at; a missing row is a TriageError."""
    target = IssueRow.objects.filter(number=number).first()
    if target is None:
        raise TriageError("duplicate_of", f"no row {number}")
    return target


@transaction.atomic
def issue_row_assign(*, row: IssueRow, actor, assignee) -> IssueRow:
    """Assign the row to an engineer or lead (None unassigns)."""
    _require_triage(actor)
    if assignee is not None and not user_can(assignee, "triage"):
        raise TriageError("assignee", f"{assignee.get_username()} cannot triage")
    row = _locked(row)
    _change(row, actor, "assign", {"assignee": assignee})
    return row


@transaction.atomic
def issue_row_set_status(*, row: IssueRow, actor, status: str, reason: str = "") -> IssueRow:
    """Move the row to another status; won't fix needs a reason and closes the row."""
    _require_triage(actor)
    if status not in Status.values:
        raise TriageError(
            "status", f"unknown status {status!r} (one of {', '.join(Status.values)})"
        )
    if status == Status.WONT_FIX:
        return issue_row_close_wont_fix(row=row, actor=actor, reason=reason)
    row = _locked(row)
    changes: dict = {"status": status}
    if row.status == Status.WONT_FIX and row.outcome == Outcome.WONT_FIX:
        changes.update(outcome=Outcome.NONE, reason="")
    if row.duplicate_of_id and status != Status.RESOLVED:
        changes.update(duplicate_of=None, outcome=Outcome.NONE, reason="")
    _change(row, actor, "status", changes)
    return row


@transaction.atomic
def issue_row_close_wont_fix(*, row: IssueRow, actor, reason: str) -> IssueRow:
    """Close the row as won't fix, with the reason why."""
    _require_triage(actor)
    reason = _required("reason", reason, 2000)
    row = _locked(row)
    _change(
        row,
        actor,
        "wont_fix",
        {
            "status": Status.WONT_FIX,
            "outcome": Outcome.WONT_FIX,
            "reason": reason,
            "duplicate_of": None,
        },
    )
    return row


@transaction.atomic
def issue_row_mark_duplicate(*, row: IssueRow, actor, of: IssueRow, reason: str = "") -> IssueRow:
    """Close the row as a duplicate of another row; refuses itself and cycles."""
    _require_triage(actor)
    if of is None:
        raise TriageError("duplicate_of", "required")
    if of.pk == row.pk:
        raise TriageError("duplicate_of", f"row {row.number} cannot duplicate itself")
    # Lock both rows in id order: two engineers marking A
    # of B and B of A at once cannot both pass the check.
    list(
        IssueRow.objects.select_for_update()
        .filter(pk__in=[row.pk, of.pk])
        .order_by("pk")
        .values_list("pk")
    )
    row = _locked(row)
    # Walk the target's chain: reaching this row would close a cycle.
    seen, current = set(), IssueRow.objects.filter(pk=of.pk).values("pk", "duplicate_of_id").first()
    while current and current["duplicate_of_id"]:
        if current["duplicate_of_id"] == row.pk:
            raise TriageError(
                "duplicate_of", f"row {of.number} already leads back to row {row.number}"
            )
        if current["pk"] in seen or len(seen) > MAX_DUPLICATE_CHAIN:
            break
        seen.add(current["pk"])
        current = (
            IssueRow.objects.filter(pk=current["duplicate_of_id"])
            .values("pk", "duplicate_of_id")
            .first()
        )
    _change(
        row,
        actor,
        "duplicate",
        {
            "duplicate_of": of,
            "status": Status.RESOLVED,
            "outcome": Outcome.DUPLICATE,
            "reason": (reason or "").strip(),
        },
    )
    return row


@transaction.atomic
def issue_row_comment(*, row: IssueRow, actor, text: str) -> IssueRowEvent:
    """Add a comment to the row's history."""
    _require_triage(actor)
    text = _required("text", text, 5000)
    row = _locked(row)
    row.save(update_fields=["updated_at"])
    return _change(row, actor, "comment", {}, text=text)


def _new_rule_fields(*, rule_id: str, group: str, text: str, severity: str) -> dict:
    """Return a new rule's cleaned id, group, text and
    severity; the first bad one is a TriageError."""
    return {
        "rule_id": _required("rule_id", rule_id, 200),
        "group": _required("group", group, 100),
        "text": _required("text", text),
        "severity": _severity(severity),
    }


def _rule_create_from_row(row: IssueRow, *, rule_id: str, **fields) -> RuleVersion:
    """Create a new rule (version 1) whose source is the
    row; a taken id or bad field is a TriageError."""
    if Rule.objects.filter(rule_id=rule_id).exists():
        raise TriageError("rule_id", f"a rule {rule_id!r} already exists")
    try:
        return rule_create(rule_id=rule_id, source=f"issue row {row.number}", **fields)
    except (ValueError, DomainError) as exc:
        raise _rule_error(exc) from exc


@transaction.atomic
def issue_row_write_rule(
    *,
    row: IssueRow,
    actor,
    rule_id: str,
    group: str,
    text: str,
    severity: str,
    safety: bool = False,
    phase: str = "",
) -> RuleVersion:
    """Way 1: create a draft rule (version 1) from the row and link the row to it."""
    _require_triage(actor)
    fields = _new_rule_fields(rule_id=rule_id, group=group, text=text, severity=severity)
    row = _locked(row)
    _open_for_a_way(row)
    version = _rule_create_from_row(
        row, **fields, safety=safety, phase=phase, status=RuleVersion.Status.DRAFT
    )
    _change(
        row,
        actor,
        "write_rule",
        _way_changes(
            row, Outcome.NEW_RULE, rule=version.rule, rule_version=version, signal_request=""
        ),
    )
    return version


@transaction.atomic
def issue_row_link_signal(*, row: IssueRow, actor, rule: Rule) -> IssueRow:
    """Way 2a: link the row to an existing detector rule (its latest version)."""
    _require_triage(actor)
    if rule is None or not rule.detector:
        raise TriageError("rule", "pick a rule that runs a detector")
    version = rule_version_current(rule)
    row = _locked(row)
    _open_for_a_way(row)
    _change(
        row,
        actor,
        "add_signal",
        _way_changes(row, Outcome.NEW_SIGNAL, rule=rule, rule_version=version, signal_request=""),
    )
    return row


@transaction.atomic
def issue_row_create_signal(
    *,
    row: IssueRow,
    actor,
    rule_id: str,
    group: str,
    text: str,
    severity: str,
    detector: dict,
) -> RuleVersion:
    """Way 2b: create a detector rule with validated parameters and link the row to it."""
    _require_triage(actor)
    fields = _new_rule_fields(rule_id=rule_id, group=group, text=text, severity=severity)
    try:
        spec = detector_validate(detector)
    except ValueError as exc:
        field, sep, reason = str(exc).partition(": ")
        raise TriageError(field if sep else "detector", reason if sep else str(exc)) from exc
    row = _locked(row)
    _open_for_a_way(row)
    version = _rule_create_from_row(
        row, **fields, detector=spec, status=RuleVersion.Status.CANDIDATE
    )
    _change(
        row,
        actor,
        "add_signal",
        _way_changes(
            row, Outcome.NEW_SIGNAL, rule=version.rule, rule_version=version, signal_request=""
        ),
    )
    return version


@transaction.atomic
def issue_row_request_signal(*, row: IssueRow, actor, request: str) -> IssueRow:
    """Way 2c: record a request for a detector that does not exist yet."""
    _require_triage(actor)
    request = _required("request", request, 2000)
    row = _locked(row)
    _open_for_a_way(row)
    _change(
        row,
        actor,
        "add_signal",
        _way_changes(row, Outcome.NEW_SIGNAL, rule=None, rule_version=None, signal_request=request),
    )
    return row


SIGNAL_WAYS = ("link", "create", "request")


def issue_row_add_signal(
    *,
    row: IssueRow,
    actor,
    way: str,
    rule: str = "",
    detector: dict | None = None,
    rule_id: str = "",
    group: str = "",
    text: str = "",
    severity: str = "",
    request: str = "",
) -> IssueRow:
    """Way 2, as the page and the API both take it: `link` the detector rule `rule`, `create` a
    detector rule (a blank id, group, text or severity takes the row's: signals.row-N, signals,
    what the reviewer wrote, the row's severity), or `request` a detector that does not exist."""
    if way == "link":
        found = Rule.objects.filter(rule_id=rule, detector__isnull=False).first() if rule else None
        if found is None:
            raise TriageError("rule", f"no detector rule {rule!r}" if rule else "required")
        issue_row_link_signal(row=row, actor=actor, rule=found)
    elif way == "create":
        prefill = issue_row_signal_prefill(row)
        issue_row_create_signal(
            row=row,
            actor=actor,
            rule_id=rule_id or prefill["rule_id"],
            group=group or prefill["group"],
            text=text or row.what,
            severity=severity or prefill["severity"],
            detector=detector if detector is not None else {},
        )
    elif way == "request":
        issue_row_request_signal(row=row, actor=actor, request=request)
    else:
        raise TriageError("way", f"choose {', '.join(SIGNAL_WAYS)}")
    return IssueRow.objects.select_related("rule").get(pk=row.pk)


@transaction.atomic
def issue_row_fix_rule(
    *,
    row: IssueRow,
    actor,
    rule: Rule,
    text: str,
    detector: dict | None = None,
    source: str = "",
    estimate: dict | None = None,
) -> RuleVersion:
    """Way 3: give the rule version n+1 with the edited text (a candidate) and link the row to
    it. From the rule workbench: the draft's detector parameters, and the figures estimated for
    it from an earlier version's marks."""
    _require_triage(actor)
    if rule is None:
        raise TriageError("rule", "required")
    text = _required("text", text)
    current = rule_version_current(rule)
    old_detector = current.detector if current else rule.detector
    detector = old_detector if detector is None else detector
    if current is not None and current.text.strip() == text and detector == old_detector:
        raise TriageError("text", f"unchanged from version {current.number}")
    row = _locked(row)
    _open_for_a_way(row)
    try:
        version = rule_version_create(
            rule=rule,
            text=text,
            detector=detector,
            status=RuleVersion.Status.CANDIDATE,
            source=f"issue row {row.number}{source}",
            estimate=estimate,
        )
    except (ValueError, DomainError) as exc:
        raise _rule_error(exc) from exc
    _change(
        row,
        actor,
        "fix_rule",
        _way_changes(row, Outcome.RULE_FIX, rule=rule, rule_version=version, signal_request=""),
        replaces=current.number if current else None,
    )
    return version


def _rows_for_bulk(numbers: list[int]) -> list[IssueRow]:
    rows = list(IssueRow.objects.filter(number__in=numbers).order_by("number"))
    missing = sorted(set(numbers) - {r.number for r in rows})
    if missing:
        raise TriageError("rows", f"no issue row {', '.join(map(str, missing))}")
    if not rows:
        raise TriageError("rows", "tick at least one row")
    return rows


@transaction.atomic
def issue_rows_assign_many(*, numbers: list[int], actor, assignee) -> int:
    """Assign every listed row (all or none); return how many."""
    rows = _rows_for_bulk(numbers)
    for row in rows:
        issue_row_assign(row=row, actor=actor, assignee=assignee)
    return len(rows)


@transaction.atomic
def issue_rows_set_status_many(*, numbers: list[int], actor, status: str, reason: str = "") -> int:
    """Move every listed row to a status (all or none); return how many."""
    rows = _rows_for_bulk(numbers)
    for row in rows:
        issue_row_set_status(row=row, actor=actor, status=status, reason=reason)
    return len(rows)
