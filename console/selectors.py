"""Reads behind the dashboard: headline figures and each role's next steps."""

from django.db.models import Count, Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from core.data_versions import figures_cached
from core.permissions import user_can
from evals.catalog.models import Transcript
from evals.gating.models import GateRun
from evals.judging.selectors.counts import verdict_counts
from evals.rules.models import Rule, RuleVersion
from labeling.charts import outcome_chart
from labeling.models import Assignment, DailySample, IssueRow, OutcomeQuestion, SampleItem
from labeling.selectors.outcomes import outcome_figures_stored
from labeling.selectors.sampling import sample_item_count

OK = Q(error="")
STATUS_ORDER = ["gated", "candidate", "draft", "retired"]


def dashboard_figures() -> dict:
    """Return the headline numbers: calls, rules by group and
    status, verdicts, flagged rate, per agent version."""
    per_version = agent_version_figures()
    total = sum(r["verdicts"] for r in per_version)
    flagged = sum(r["flagged"] for r in per_version)
    errored = sum(r["errored"] for r in per_version)
    judged = total - errored
    groups = list(Rule.objects.values("group").annotate(rules=Count("id")).order_by("group"))
    statuses = dict(
        RuleVersion.objects.values_list("status").annotate(n=Count("id")).order_by("status")
    )
    return {
        "calls": sum(r["calls"] for r in per_version),
        "calls_with_audio": sum(r["with_audio"] for r in per_version),
        "rules": sum(g["rules"] for g in groups),
        "groups": groups,
        "version_statuses": statuses,
        "rule_table": rule_status_table(),
        "verdicts": total,
        "flagged": flagged,
        "errored": errored,
        "flagged_rate": (flagged / judged) if judged else None,
        "agent_versions": per_version,
    }


def rule_status_table() -> dict:
    """Return, per rule group, how many rules there are, how many
    are safety rules, and the status of their latest versions."""
    latest: dict[int, str] = {}
    for rule_id, status in RuleVersion.objects.order_by("rule_id", "number").values_list(
        "rule_id", "status"
    ):
        latest[rule_id] = status  # the last one seen is the highest number
    rows: dict[str, dict] = {}
    for pk, group, safety in Rule.objects.order_by("group").values_list("pk", "group", "safety"):
        row = rows.setdefault(
            group,
            {"group": group, "rules": 0, "safety": 0, "statuses": dict.fromkeys(STATUS_ORDER, 0)},
        )
        row["rules"] += 1
        row["safety"] += int(safety)
        status = latest.get(pk)
        if status:
            row["statuses"][status] = row["statuses"].get(status, 0) + 1
    totals = {"rules": 0, "safety": 0, "statuses": dict.fromkeys(STATUS_ORDER, 0)}
    for row in rows.values():
        row["status_list"] = [row["statuses"].get(s, 0) for s in STATUS_ORDER]
        totals["rules"] += row["rules"]
        totals["safety"] += row["safety"]
        for s in STATUS_ORDER:
            totals["statuses"][s] += row["statuses"].get(s, 0)
    totals["status_list"] = [totals["statuses"][s] for s in STATUS_ORDER]
    return {"statuses": STATUS_ORDER, "rows": list(rows.values()), "totals": totals}


def _calls_per_agent_version() -> dict[int, dict]:
    # A scan of every call (30 ms at 50,604): cached until calls change, not verdicts.
    return {
        r["agent_version"]: r
        for r in Transcript.objects.values(
            "agent_version", "agent_version__agent__name", "agent_version__version"
        )
        .annotate(calls=Count("id"), with_audio=Count("id", filter=~Q(audio_url="")))
        .order_by()
    }


def agent_version_figures() -> list[dict]:
    """Return calls (and those with audio), verdicts, flagged,
    errored and the flagged rate per agent version, newest first."""
    calls = figures_cached("calls-per-agent-version", _calls_per_agent_version, reads=("calls",))
    # The precomputed counts (a few rows per agent version); the headline totals are their sums.
    verdicts = verdict_counts("agent_version_id")
    out = []
    for pk, c in calls.items():
        v = verdicts.get(pk, {})
        n, flagged, errored = v.get("n", 0), v.get("flagged", 0), v.get("errored", 0)
        judged = n - errored
        out.append(
            {
                "agent": c["agent_version__agent__name"],
                "version": c["agent_version__version"],
                "calls": c["calls"],
                "with_audio": c["with_audio"],
                "verdicts": n,
                "flagged": flagged,
                "errored": errored,
                "flagged_rate": flagged / judged if judged else None,
            }
        )
    out.sort(key=lambda r: (r["agent"], r["version"]), reverse=True)
    return out


def url_or_none(*names: str) -> str | None:
    """Return the URL of the first of these route names
    that exists (pages other areas add may not yet)."""
    for name in names:
        try:
            return reverse(name)
        except NoReverseMatch:
            continue
    return None


def next_steps(user) -> list[dict]:
    """Return the 'what to do next' panels for the roles the
    user holds, each with figures and links it may use."""
    panels = []
    today = timezone.localdate()
    if user_can(user, "review"):
        sample = DailySample.objects.filter(day=today).first()
        items = SampleItem.objects.filter(sample=sample) if sample else SampleItem.objects.none()
        total = sample_item_count(sample) if sample else 0
        mine_done = (
            Assignment.objects.filter(
                item__sample=sample, reviewer=user, finished_at__isnull=False
            ).count()
            if sample
            else 0
        )
        done_by_anyone = (
            items.filter(assignments__finished_at__isnull=False).distinct().count() if sample else 0
        )
        panels.append(
            {
                "role": "reviewer",
                "title": "Review today's sample",
                "text": (
                    f"{total} calls drawn for {today:%Y-%m-%d}; "
                    f"{done_by_anyone} reviewed, {mine_done} by you."
                    if sample
                    else "Today's sample has not been drawn yet."
                ),
                "figures": [
                    ("in today's sample", total),
                    ("reviewed", done_by_anyone),
                    ("by you", mine_done),
                ],
                "action": ("Start reviewing", url_or_none("review", "review-start")),
            }
        )
    if user_can(user, "triage"):
        new = IssueRow.objects.filter(status=IssueRow.Status.NEW)
        counts = new.aggregate(
            n=Count("id"),
            major=Count("id", filter=Q(severity__in=["major", "critical"])),
            audio=Count("id", filter=Q(audio_only=True)),
        )
        panels.append(
            {
                "role": "engineer",
                "title": "Work the issue sheet",
                "text": f"{counts['n']} new issue rows, "
                f"{counts['major']} of them major or critical.",
                "figures": [
                    ("new rows", counts["n"]),
                    ("major or critical", counts["major"]),
                    ("audio only", counts["audio"]),
                ],
                "action": ("Open issues", url_or_none("issue-sheet", "issue-list", "issues")),
                "more": [("Judge runs", url_or_none("judge-run-list"))]
                if user_can(user, "run_judge")
                else [],
            }
        )
    if user_can(user, "view_calibration"):
        candidates = RuleVersion.objects.filter(status=RuleVersion.Status.CANDIDATE).count()
        gated = RuleVersion.objects.filter(status=RuleVersion.Status.GATED).count()
        last_run = (
            GateRun.objects.select_related("gate", "candidate")
            .order_by("-created_at", "-pk")
            .first()
        )
        text = f"{candidates} rule versions wait as candidates; {gated} are in the gate."
        if last_run:
            text += (
                f" Last gate run: {last_run.gate.name} on "
                f"{last_run.candidate.version}, {last_run.status}."
            )
        links = [
            ("Calibration", url_or_none("calibration", "calibration-list")),
            ("Gates", url_or_none("gate-index", "gate-list", "gates")),
        ]
        panels.append(
            {
                "role": "lead",
                "title": "Calibrate, promote, read the gates",
                "text": text,
                "figures": [("candidates", candidates), ("gated", gated)],
                "action": links[0],
                "more": links[1:],
            }
        )
    return panels


def dashboard_outcomes() -> list[dict]:
    """Return, per agent with rated calls, its first outcome question's trend chart (weighted
    mean rating per agent version and week) and its bad calls, for the dashboard."""
    out = []
    questions = (
        OutcomeQuestion.objects.filter(ratings__isnull=False)
        .select_related("agent")
        .distinct()
        .order_by("agent__name", "position", "id")
    )
    seen = set()
    for question in questions:
        if question.agent_id in seen:
            continue
        seen.add(question.agent_id)
        figures = figures_cached(
            f"outcome-figures:{question.pk}",
            lambda q=question: outcome_figures_stored(question=q, by="week"),
            reads=("ratings", "samples", "calls"),
        )
        out.append(
            {
                "agent": question.agent.name,
                "question": question,
                "chart": outcome_chart(figures["trend"], period="week"),
                "versions": figures["versions"],
            }
        )
    return out
