"""Calibration pages for leads: the table, one rule
version, the verdicts behind a cell, decisions, ties."""

import csv
import io

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.errors import DomainError
from core.permissions import require
from evals.judging.models import Judge, Verdict
from evals.rules.models import RuleVersion
from labeling.charts import trend_chart
from labeling.models import PromotionDecision
from labeling.selectors import calibration as cal
from labeling.selectors.marks_needed import marks_needed
from labeling.services.promotion import rule_version_demote, rule_version_promote
from labeling.services.settlements import verdict_settle

SORTS = {
    "rule": lambda r: (r.rule_version.rule.rule_id, r.rule_version.number),
    "group": lambda r: r.rule_version.rule.group,
    "status": lambda r: r.rule_version.status,
    "judge": lambda r: r.judge.name if r.judge else "",
    "marked": lambda r: r.counts.marked,
    "precision": lambda r: r.figures.precision.value,
    "precision_low": lambda r: r.figures.precision.ci[0] if r.figures.precision.ci else None,
    "recall": lambda r: r.figures.recall.value,
    "recall_low": lambda r: r.figures.recall.ci[0] if r.figures.recall.ci else None,
    "f1": lambda r: r.figures.f1.value,
    "kappa": lambda r: r.figures.kappa,
    "waiting": lambda r: r.counts.waiting,
    "eligible": lambda r: r.eligible,
}
COLUMNS = [
    ("rule", "Rule"),
    ("status", "Status"),
    ("marked", "Marked"),
    ("precision", "Precision"),
    ("recall", "Recall"),
    ("f1", "F1"),
    ("kappa", "κ"),
    ("waiting", "Ties"),
    ("eligible", "Eligible"),
]
# TP, FP, FN, TN sit between Marked and Precision: counts, not sortable.
COUNT_COLUMNS_AFTER = "marked"


def _sorted(rows, sort: str, desc: bool):
    key = SORTS.get(sort, SORTS["rule"])
    known = [r for r in rows if key(r) is not None]
    unknown = [
        r for r in rows if key(r) is None
    ]  # unknown figures go last, whichever the direction
    return sorted(known, key=key, reverse=desc) + unknown


def _rows_from_request(request):
    filters = cal.calibration_filters(request.GET)
    selected = [int(x) for x in request.GET.getlist("rv") if x.isdigit()]
    if selected:
        filters["rule_version_ids"] = selected
    rows = cal.calibration_rows(**filters)
    sort = request.GET.get("sort", "rule")
    desc = request.GET.get("dir") == "desc"
    return filters, _sorted(rows, sort, desc), sort, desc


@require("view_calibration")
@require_GET
def calibration(request):
    try:
        _filters, rows, sort, desc = _rows_from_request(request)
    except DomainError as e:
        return HttpResponseBadRequest(str(e))
    params = request.GET.copy()
    for key in ("sort", "dir"):
        params.pop(key, None)
    text_columns = ("rule", "group", "judge", "status")

    def next_dir(key):
        if sort == key:
            return "asc" if desc else "desc"
        return "asc" if key in text_columns else "desc"

    columns = [
        {
            "key": key,
            "label": label,
            "active": sort == key,
            "dir": next_dir(key),
            "arrow": ("▼" if desc else "▲") if sort == key else "",
        }
        for key, label in COLUMNS
    ]
    for r in rows:
        r.needed = marks_needed(r)
    context = {
        "rows": rows,
        "overall": cal.calibration_overall(rows),
        "filters": {k: request.GET.get(k, "") for k in ("judge", "group", "status", "rule")},
        "options": {
            "groups": cal.calibration_groups(),
            "judges": cal.calibration_judges(),
            "statuses": RuleVersion.Status.choices,
        },
        "columns": columns,
        "base_query": params.urlencode(),
        "floors": cal.floors_from_settings(),
    }
    if request.htmx and not request.htmx.boosted and not request.htmx.history_restore_request:
        return render(request, "labeling/calibration.html#cal-results", context)
    return render(request, "labeling/calibration.html", context)


def _markdown(rows) -> str:
    def fig(est):
        if est.value is None:
            return "–"
        return f"{est.value:.2f} [{est.ci[0]:.2f}, {est.ci[1]:.2f}]"

    lines = [
        (
            "| Rule | Version | Judge | Status | Marked | "
            "Precision [95% CI] | Recall [95% CI] | Eligible |"
        ),
        "|---|---:|---|---|---:|---|---|---|",
    ]
    for r in rows:
        rv = r.rule_version
        eligible = "yes" if r.eligible else "no: " + "; ".join(r.why_not)
        lines.append(
            f"| `{rv.rule.rule_id}` | {rv.number} | "
            f"{r.judge.name if r.judge else '–'} | {rv.status} | {r.counts.marked} "
            f"| {fig(r.figures.precision)} | {fig(r.figures.recall)} | {eligible} |"
        )
    return "\n".join(lines) + "\n"


CSV_FIELDS = [
    "rule",
    "version",
    "judge",
    "status",
    "marked",
    "tp",
    "fp",
    "fn",
    "tn",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "weighted_precision",
    "weighted_recall",
    "effective_n",
    "kappa",
    "waiting",
    "errored",
    "eligible",
    "why_not",
]


def _csv(rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_FIELDS)
    for r in rows:
        d = r.as_dict()
        pci, rci = d["precision_ci"] or [None, None], d["recall_ci"] or [None, None]
        writer.writerow(
            [
                d["rule"],
                d["version"],
                d["judge"] or "",
                d["status"],
                d["marked"],
                d["tp"],
                d["fp"],
                d["fn"],
                d["tn"],
                d["precision"],
                pci[0],
                pci[1],
                d["recall"],
                rci[0],
                rci[1],
                d["f1"],
                d["weighted"]["precision"],
                d["weighted"]["recall"],
                d["weighted"]["effective_n"],
                d["kappa"],
                d["waiting"],
                d["errored"],
                "yes" if d["eligible"] else "no",
                "; ".join(d["why_not"]),
            ]
        )
    return out.getvalue().replace("None", "")


@require("view_calibration")
@require_GET
def calibration_export(request, fmt: str):
    if fmt not in ("md", "csv"):
        raise Http404("Export as .md or .csv.")
    try:
        _, rows, _, _ = _rows_from_request(request)
    except DomainError as e:
        return HttpResponseBadRequest(str(e))
    if fmt == "md":
        # text/plain so the browser shows it, ready to copy into a pull request.
        return HttpResponse(_markdown(rows), content_type="text/plain; charset=utf-8")
    response = HttpResponse(_csv(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="calibration.csv"'
    return response


def _rule_version(pk: int) -> RuleVersion:
    return get_object_or_404(RuleVersion.objects.select_related("rule"), pk=pk)


def _judge(request, rule_version) -> tuple[Judge | None, list[cal.CalibrationRow]]:
    rows = cal.calibration_rows(rule_version_ids=[rule_version.pk], include_unmarked=False)
    judge_id = request.GET.get("judge") or request.POST.get("judge")
    if judge_id and judge_id.isdigit():
        chosen = [r for r in rows if r.judge.pk == int(judge_id)]
        if not chosen:
            raise Http404("No marks by that judge on this rule version.")
        return chosen[0], rows
    if rows:
        return max(rows, key=lambda r: (r.counts.marked, -r.judge.pk)), rows
    return None, rows


@require("view_calibration")
@require_GET
def calibration_detail(request, pk: int):
    rv = _rule_version(pk)
    row, rows = _judge(request, rv)
    floors = cal.floors_from_settings()
    if row is None:
        row = cal.CalibrationRow(rv, None, cal.Counts(), floors)
        chart = None
    else:
        by = "week"
        trend = cal.calibration_trend(rule_version=rv, judge=row.judge)
        if len(trend) < 3:  # a week or two of marks: by day says more
            by, trend = "day", cal.calibration_trend(rule_version=rv, judge=row.judge, by="day")
        floor_of = {"precision": row.precision_floor, "recall": row.recall_floor}
        chart = trend_chart(trend, floor_of, period=by) if trend else None
    figs = row.figures
    context = {
        "rv": rv,
        "row": row,
        "judges": [r.judge for r in rows],
        "figures": [
            ("Precision", figs.precision, figs.w_precision),
            ("Recall", figs.recall, figs.w_recall),
            ("F1", figs.f1, figs.w_f1),
            ("Specificity", figs.specificity, figs.w_specificity),
        ],
        "chart": chart,
        "decisions": PromotionDecision.objects.filter(rule_version=rv).select_related(
            "actor", "judge", "replaced"
        )[:20],
        "other_versions": rv.rule.versions.exclude(pk=rv.pk).order_by("-number"),
        "needed": marks_needed(row),
        "gated_version": rv.rule.versions.exclude(pk=rv.pk)
        .filter(status=RuleVersion.Status.GATED)
        .first(),
        "floors": floors,
        "judge_query": f"?judge={row.judge.pk}" if row.judge else "",
    }
    return render(request, "labeling/calibration_detail.html", context)


@require("view_calibration")
@require_GET
def calibration_cell(request, pk: int, cell: str):
    rv = _rule_version(pk)
    if cell not in cal.CELL_LABELS:
        raise Http404("Unknown cell.")
    row, _ = _judge(request, rv)
    verdicts = (
        cal.calibration_cell_verdicts(rule_version=rv, judge=row.judge if row else None, cell=cell)
        if row
        else []
    )
    page = Paginator(verdicts, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "labeling/calibration_cell.html",
        {
            "rv": rv,
            "row": row,
            "cell": cell,
            "cell_label": cal.CELL_LABELS[cell],
            "page": page,
            "cells": [(c, label) for c, label in cal.CELL_LABELS.items()],
            "judge_query": f"judge={row.judge.pk}" if row else "",
        },
    )


def _decide(request, pk: int, service, verb: str):
    rv = _rule_version(pk)
    judge = None
    if (request.POST.get("judge") or "").isdigit():
        judge = get_object_or_404(Judge, pk=int(request.POST["judge"]))
    try:
        decision = service(
            rule_version=rv, actor=request.user, reason=request.POST.get("reason", ""), judge=judge
        )
    except DomainError as e:
        messages.error(request, str(e))
    else:
        replaced = f", replacing v{decision.replaced.number}" if decision.replaced else ""
        messages.success(request, f"{rv.rule.rule_id} v{rv.number} {verb}{replaced}.")
    url = reverse("calibration-detail", args=[rv.pk])
    return redirect(url + (f"?judge={judge.pk}" if judge else ""))


@require("promote")
@require_POST
def calibration_promote(request, pk: int):
    return _decide(request, pk, rule_version_promote, "promoted into the gate")


@require("promote")
@require_POST
def calibration_demote(request, pk: int):
    return _decide(request, pk, rule_version_demote, "demoted out of the gate")


@require("view_calibration")
@require_GET
def calibration_decisions(request):
    qs = PromotionDecision.objects.select_related(
        "rule_version__rule", "judge", "actor", "replaced"
    )
    page = Paginator(qs.order_by("-at", "-pk"), 50).get_page(request.GET.get("page"))
    return render(request, "labeling/calibration_decisions.html", {"page": page})


@require("view_calibration")
@require_GET
def calibration_disagreements(request):
    only_ties = request.GET.get("ties") == "1"
    rows = cal.disagreements(only_ties=only_ties)
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "labeling/calibration_disagreements.html",
        {
            "page": page,
            "only_ties": only_ties,
            "next_url": request.get_full_path(),
        },
    )


@require("promote")
@require_POST
def calibration_settle(request, pk: int):
    verdict = get_object_or_404(Verdict.objects.select_related("rule_version__rule"), pk=pk)
    value = request.POST.get("correct")
    if value not in ("right", "wrong"):
        return HttpResponseBadRequest("correct: expected 'right' or 'wrong'.")
    try:
        verdict_settle(
            verdict=verdict,
            actor=request.user,
            correct=value == "right",
            reason=request.POST.get("reason", ""),
        )
    except DomainError as e:
        if request.htmx:
            return HttpResponseBadRequest(str(e))
        messages.error(request, " ".join(e.messages))
    else:
        if request.htmx:
            # Swap the settled row in place; it stays in the list (its marks still split).
            row = cal.disagreements().filter(pk=verdict.pk).first()
            return render(
                request,
                "labeling/calibration_disagreements.html#disagreement-row",
                {
                    "v": row,
                    "next_url": reverse("calibration-disagreements"),
                },
            )
        messages.success(request, f"Verdict {verdict.pk} settled: the judge was {value}.")
    nxt = request.POST.get("next") or ""
    return redirect(
        nxt if nxt.startswith("/calibration/") else reverse("calibration-disagreements")
    )
