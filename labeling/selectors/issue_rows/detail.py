"""One issue row: its progress through triage, next steps, history and links."""

from django.db import connection
from django.db.models import Count, Q, QuerySet

from evals.judging.models import Verdict
from evals.judging.selectors.counts import verdict_counts
from evals.rules.models import RuleVersion
from labeling.models import IssueRow, Mark

Status = IssueRow.Status
Outcome = IssueRow.Outcome


def rule_version_progress(version_ids) -> dict[int, dict]:
    """Return, per rule version id: verdicts judged, flagged,
    marks, marks wrong, status and the gated version."""
    ids = set(version_ids)
    if not ids:
        return {}
    out = {
        v.pk: {
            "rule": v.rule.rule_id,
            "version": v.number,
            "status": v.status,
            "verdicts": 0,
            "flagged": 0,
            "errored": 0,
            "marks": 0,
            "wrong": 0,
            "gated_version": None,
            "rule_pk": v.rule_id,
        }
        for v in RuleVersion.objects.filter(pk__in=ids).select_related("rule")
    }
    for pk, c in verdict_counts("rule_version_id", rule_version_id__in=ids).items():
        out[pk].update(verdicts=c["n"] - c["errored"], flagged=c["flagged"], errored=c["errored"])
    for r in (
        Mark.objects.filter(verdict__rule_version_id__in=ids)
        .values("verdict__rule_version_id")
        .annotate(n=Count("id"), wrong=Count("id", filter=Q(correct=False)))
    ):
        out[r["verdict__rule_version_id"]].update(marks=r["n"], wrong=r["wrong"])
    gated = dict(
        RuleVersion.objects.filter(
            rule_id__in={p["rule_pk"] for p in out.values()}, status=RuleVersion.Status.GATED
        )
        .order_by("rule_id", "number")
        .values_list("rule_id", "number")
    )
    for p in out.values():
        p["gated_version"] = gated.get(p["rule_pk"])
    return out


def issue_row_next_steps(row: IssueRow, progress: dict | None = None) -> list[dict]:
    """Return the steps after triage for the row's
    linked rule version, each with done and a note."""
    if row.outcome == Outcome.NEW_SIGNAL and not row.rule_version_id and row.signal_request:
        return [
            {"step": "detector requested", "done": True, "note": row.signal_request[:120]},
            {"step": "detector built", "done": False, "note": "no such detector yet"},
        ]
    if not row.rule_version_id:
        return []
    p = (
        progress
        if progress is not None
        else rule_version_progress([row.rule_version_id]).get(row.rule_version_id)
    )
    if not p:
        return []
    written = "written" if row.outcome != Outcome.NEW_SIGNAL else "linked"
    steps = [
        {"step": written, "done": True, "note": f"{p['rule']} v{p['version']} ({p['status']})"},
        {
            "step": "judged",
            "done": p["verdicts"] > 0,
            "note": f"{p['verdicts']} verdicts, {p['flagged']} flagged"
            if p["verdicts"]
            else "no verdicts yet",
        },
        {
            "step": "judge checked",
            "done": p["marks"] > 0,
            "note": f"{p['marks']} marks, {p['wrong']} wrong" if p["marks"] else "no marks yet",
        },
    ]
    promoted = p["status"] == RuleVersion.Status.GATED
    note = "in the gate" if promoted else f"not yet ({p['status']})"
    if not promoted and p["gated_version"] and p["gated_version"] != p["version"]:
        note += f"; v{p['gated_version']} stays in the gate until then"
    steps.append({"step": "promoted", "done": promoted, "note": note})
    return steps


def _flagged_at_turn(row: IssueRow) -> QuerySet:
    return Verdict.objects.filter(transcript_id=row.transcript_id, flagged=True, error="").filter(
        Q(turn=row.turn) | Q(turns__contains=[row.turn])
        if connection.vendor == "postgresql"
        else Q(turn=row.turn)
    )


def issue_row_suggested_way(row: IssueRow) -> str:
    """Return the way a row most likely goes: signal (audio
    only), fix (a rule fired at its turn) or rule."""
    if row.audio_only:
        return "signal"
    if row.turn is not None and _flagged_at_turn(row).exists():
        return "fix"
    return "rule"


def issue_row_judged_at_turn(row: IssueRow) -> list:
    """Return the flagged verdicts at the row's turn,
    with their rules: what the judge said there."""
    if row.turn is None:
        return []
    return list(
        _flagged_at_turn(row)
        .select_related("rule_version__rule", "judge")
        .order_by("rule_version__rule__rule_id")
    )


def issue_row_detail(number: int) -> IssueRow:
    """Return the row with what its detail page shows, or raise IssueRow.DoesNotExist."""
    return IssueRow.objects.select_related(
        "transcript__agent_version__agent",
        "reporter",
        "assignee",
        "rule",
        "rule_version__rule",
        "duplicate_of",
    ).get(number=number)


EVENT_LABELS = {
    "filed": "filed the row",
    "assign": "assigned",
    "status": "changed the status",
    "duplicate": "closed it as a duplicate",
    "wont_fix": "closed it as won't fix",
    "comment": "commented",
    "write_rule": "wrote a rule",
    "add_signal": "added a signal",
    "fix_rule": "fixed the rule",
}


def issue_row_events(row: IssueRow) -> list:
    """Return the row's history, oldest first, with actors and a label for each kind."""
    labels = {"status": dict(Status.choices), "outcome": {**dict(Outcome.choices), "": "untriaged"}}
    events = list(row.events.select_related("actor").order_by("at", "id"))
    for e in events:
        e.label = EVENT_LABELS.get(e.kind, e.kind.replace("_", " "))
        e.changes = [
            {
                "field": field.replace("_", " "),
                "old": labels.get(field, {}).get(old, old),
                "new": labels.get(field, {}).get(new, new),
            }
            for field, (old, new) in (e.data.get("changes") or {}).items()
        ]
    return events


def call_link(row: IssueRow) -> str:
    """Return the call page URL opened at the row's turn (the player cues the audio there)."""
    from django.urls import reverse

    url = reverse("transcript-detail", args=[row.transcript.external_id])
    if row.turn is None:
        return url
    return f"{url}?turn={row.turn}#turn-{row.turn}"
