"""Axes report pages: the reports of each agent, and one report per axis, per task and per
trajectory. Read only: reports are made by the axes command or the API."""

from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.permissions import require
from evals.trajectories.axes import AXES, AXIS_TITLES
from evals.trajectories.models import AxesReport
from evals.trajectories.output import _cell, axis_text, pct
from evals.trajectories.services.reports import axes_report_payload


def _reports():
    return AxesReport.objects.select_related(
        "agent_version__agent", "baseline__agent_version"
    ).order_by("-created_at", "-pk")


@require("run_gate")
@require_GET
def axes_report_list(request):
    page = Paginator(_reports(), 50).get_page(request.GET.get("page"))
    reports = []
    for r in page.object_list:
        overall = (r.results or {}).get("overall", {})
        reports.append(
            {
                "report": r,
                "cells": [
                    pct((overall.get(a) or {}).get("pass_rate"))
                    if (overall.get(a) or {}).get("n")
                    else "–"
                    for a in AXES
                ],
            }
        )
    context = {"page": page, "reports": reports, "titles": [AXIS_TITLES[a] for a in AXES]}
    return render(request, "trajectories/axes_reports.html", context)


@require("run_gate")
@require_GET
def axes_report_detail(request, pk: int):
    report = _reports().filter(pk=pk).first()
    if report is None:
        raise Http404("No such axes report.")
    payload = axes_report_payload(report, rows=True)
    comparison = {c["axis"]: c for c in payload["comparison"]}
    overall = {a: payload["overall"].get(a) or {} for a in AXES}
    cards = [
        {
            "axis": a,
            "title": AXIS_TITLES[a],
            "rate": pct(overall[a].get("pass_rate")) if overall[a].get("n") else "–",
            "text": axis_text(a, overall[a]),
            "comparison": comparison.get(a),
            "baseline_rate": pct(comparison[a]["baseline_pass_rate"]) if a in comparison else "",
        }
        for a in AXES
    ]
    tasks = [
        {
            "task": t["task"],
            "n": t["trajectories"],
            "cells": [_cell(t[a]) for a in AXES],
            "points": (
                f"{t['tool_correctness']['points']}/{t['tool_correctness']['max']}"
                if t["tool_correctness"].get("n")
                else "–"
            ),
        }
        for t in payload["tasks"]
    ]
    rows = []
    for r in payload["rows"]:
        ts, tc, fa = r["task_success"], r["tool_correctness"], r["faithfulness"]
        rows.append(
            {
                "id": r["id"],
                "task": r["task"],
                "success": "–" if ts is None else ("pass" if ts["passed"] else "fail"),
                "success_ok": ts and ts["passed"],
                "tools": "–" if tc is None else f"{tc['points']}/{tc['max']}",
                "tools_ok": tc and tc["passed"],
                "wrong": ", ".join(
                    [c["tool"] + " (missing)" for c in tc["calls"] if not c["found"]]
                    + [
                        f"{c['tool']}: {', '.join(c['wrong_args'])}"
                        for c in tc["calls"]
                        if c["found"] and c["wrong_args"]
                    ]
                    + [f"{p} (prohibited)" for p in tc["prohibited"]]
                )
                if tc
                else "",
                "faithful": "–" if fa is None else f"{fa['supported']}/{fa['total']}",
                "faithful_ok": fa and fa["passed"],
            }
        )
    context = {
        "report": report,
        "payload": payload,
        "cards": cards,
        "titles": [AXIS_TITLES[a] for a in AXES],
        "tasks": tasks,
        "rows": rows,
    }
    return render(request, "trajectories/axes_report.html", context)
