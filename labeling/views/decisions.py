"""Decision points: the label a reviewer gives on the review page, and the accuracy page."""

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from core.errors import DomainError
from core.permissions import require, user_can
from evals.catalog.models import AgentVersion
from evals.decisions.models import Decision
from evals.decisions.selectors import (
    decision_accuracy_table,
    decision_kinds_active,
    decisions_wrong,
)
from labeling.models import DecisionLabel
from labeling.services.decisions import (
    HARD_BOUNDARY_MS,
    HARD_LIMIT,
    HARD_MAX_CONFIDENCE,
    HARD_WITHIN_MS,
    hard_moments_queue,
)
from labeling.services.decisions import decision_label_set as _label_set
from labeling.services.held import NotHeld

HIST_W, HIST_H, HIST_PAD = 560, 150, 22


@require_POST
@require("review")
def review_decision_label(request, external_id, decision_id):
    decision = get_object_or_404(
        Decision.objects.select_related("transcript", "kind", "kind_version"),
        pk=decision_id,
        transcript__external_id=external_id,
    )
    call = decision.transcript
    error = ""
    try:
        _label_set(reviewer=request.user, decision=decision, answer=request.POST.get("answer", ""))
    except NotHeld as exc:  # the service's rule, the API's too
        return HttpResponseBadRequest(exc.message)
    except DomainError as exc:
        error = str(exc)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(reverse("review-call", args=[external_id]) + f"#moment-{decision.pk}")
    decision.answers = list(decision.kind_version.answers)
    decision.my_label = DecisionLabel.objects.filter(
        decision=decision, reviewer=request.user
    ).first()
    decision.hard_reason = getattr(getattr(decision, "hard_moment", None), "reason", "")
    response = render(
        request,
        "labeling/partials/decision_moment.html",
        {"d": decision, "call": call, "saved": not error, "error": error},
    )
    return trigger_client_event(response, "decision-labeled", {"decision": decision.pk})


def _histogram_svg(gaps: dict) -> dict:
    """Lay out grouped bars (one group per gap bin, one bar per answer) as SVG coordinates."""
    series = list(gaps["by_answer"].items())
    series.sort(key=lambda kv: (kv[0] == "unlabeled", kv[0]))
    bins = gaps["bins"]
    top = max((max(v) for _, v in series), default=0) or 1
    group_w = (HIST_W - 2) / len(bins)
    bar_w = max(2.0, (group_w - 4) / max(1, len(series)))
    bars = []
    for s, (answer, counts) in enumerate(series):
        css = "s-unlabeled" if answer == "unlabeled" else f"s{min(s, 3)}"
        for i, n in enumerate(counts):
            h = (HIST_H - HIST_PAD) * n / top
            bars.append(
                {
                    "x": round(1 + i * group_w + 2 + s * bar_w, 1),
                    "y": round(HIST_H - HIST_PAD - h, 1),
                    "w": round(bar_w - 1, 1),
                    "h": round(h, 1),
                    "css": css,
                    "title": f"{answer}: {n} at {bins[i]} ms",
                }
            )
    ticks = [
        {"x": round(1 + i * group_w + group_w / 2, 1), "text": b.replace(" ", "")}
        for i, b in enumerate(bins)
    ]
    legend = [
        {"answer": a, "css": "s-unlabeled" if a == "unlabeled" else f"s{min(s, 3)}", "n": sum(c)}
        for s, (a, c) in enumerate(series)
    ]
    return {
        "w": HIST_W,
        "h": HIST_H,
        "base": HIST_H - HIST_PAD,
        "bars": bars,
        "ticks": ticks,
        "legend": legend,
        "top": top,
    }


@require_GET
@require("view_console")
def decision_accuracy_page(request):
    kind = request.GET.get("kind", "")
    version = request.GET.get("agent_version", "")
    rows = decision_accuracy_table(kind=kind, agent_version=version)
    for row in rows:
        row["hist"] = _histogram_svg(row["gaps"]) if row["gaps"] else None
        row["matrix"] = [
            {
                "choice": r["choice"],
                "cells": [(a, r["answers"][a], a == r["choice"]) for a in row["answers"]],
            }
            for r in row["confusion"]
        ]
    return render(
        request,
        "labeling/decisions.html",
        {
            "rows": rows,
            "wrong": decisions_wrong(kind=kind, agent_version=version),
            "kinds": decision_kinds_active(),
            "versions": AgentVersion.objects.select_related("agent").order_by(
                "agent__name", "version"
            ),
            "filters": {"kind": kind, "agent_version": version},
            "can_queue": user_can(request.user, "manage_sample"),
            "hard": {
                "max_confidence": HARD_MAX_CONFIDENCE,
                "boundary_ms": HARD_BOUNDARY_MS,
                "within_ms": HARD_WITHIN_MS,
                "limit": HARD_LIMIT,
            },
        },
    )


def _number(request, name: str, default, cast):
    raw = request.POST.get(name, "").strip()
    if not raw:
        return default
    try:
        return cast(raw)
    except ValueError:
        raise DomainError(f"{raw!r} is not a number.", field=name) from None


@require_POST
@require("manage_sample")
def decision_hard_queue(request):
    try:
        made = hard_moments_queue(
            by=request.user,
            kind=request.POST.get("kind", ""),
            max_confidence=_number(request, "max_confidence", HARD_MAX_CONFIDENCE, float),
            boundary_ms=_number(request, "boundary_ms", HARD_BOUNDARY_MS, int),
            within_ms=_number(request, "within_ms", HARD_WITHIN_MS, int),
            limit=_number(request, "limit", HARD_LIMIT, int),
        )
    except DomainError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("decision-accuracy")
    calls = len({m.decision.transcript_id for m in made})
    messages.success(
        request,
        f"Queued {len(made)} hard moment{'s' if len(made) != 1 else ''} on {calls} "
        f"call{'s' if calls != 1 else ''}; the calls are in today's review queue.",
    )
    return redirect("decision-accuracy")
