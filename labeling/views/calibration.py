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
from core.pages import page_or_fragment
from core.parsing import whole_number
from core.permissions import require
from evals.judging.models import Judge, Verdict
from evals.rules.models import RuleVersion
from labeling.charts import trend_chart
from labeling.models import PromotionDecision
from labeling.selectors import calibration as cal
from labeling.selectors.judge_pairs import judge_pairs_attach
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
    "accuracy": lambda r: r.figures.accuracy.value,
    "f1": lambda r: r.figures.f1.value,
    "judge_kappa": lambda r: r.figures.judge_kappa.value,
    "kappa": lambda r: r.figures.kappa,
    "errored": lambda r: r.counts.errored,
    "waiting": lambda r: r.counts.waiting,
    "eligible": lambda r: r.eligible,
}
# The status sits in the rule's cell (one column fewer); ?sort=status still sorts by it.
COLUMNS = [
    ("rule", "Rule"),
    ("marked", "Marked"),
    ("errored", "Errored"),
    ("precision", "Precision"),
    ("recall", "Recall"),
    ("accuracy", "Accuracy"),
    ("f1", "F1"),
    ("judge_kappa", "Judge κ"),
    ("kappa", "Reviewer κ"),
    ("waiting", "Ties"),
    ("eligible", "Eligible"),
]
# TP, FP, FN, TN sit between Marked and Errored: counts, not sortable.
COUNT_COLUMNS_AFTER = "marked"
ERRORS_CHOICES = [("exclude", "left out"), ("as_wrong", "counted wrong")]


def _sorted(rows, sort: str, desc: bool):
    key = SORTS.get(sort, SORTS["rule"])
    known = [r for r in rows if key(r) is not None]
    unknown = [
        r for r in rows if key(r) is None
    ]  # unknown figures go last, whichever the direction
    return sorted(known, key=key, reverse=desc) + unknown


def _rows_from_request(request, *, pairs: bool = True):
    filters = cal.calibration_filters(request.GET)
    selected = [whole_number(x, field="rv", low=1) for x in request.GET.getlist("rv") if x]
    if selected:
        filters["rule_version_ids"] = selected
    rows = cal.calibration_rows(**filters)
    if pairs:
        judge_pairs_attach(rows, errors=filters["errors"])
    sort = request.GET.get("sort", "rule")
    desc = request.GET.get("dir") == "desc"
    return filters, _sorted(rows, sort, desc), sort, desc


def _shared_rule_versions(rows) -> int:
    """How many of the rows' rule versions two or more judges share (the judges compared)."""
    judges: dict[int, int] = {}
    for r in rows:
        if r.judge is not None:
            judges[r.rule_version.pk] = judges.get(r.rule_version.pk, 0) + 1
    return sum(1 for n in judges.values() if n >= 2)


CALIBRATION_ROWS_PER_PAGE = 100  # rule versions x judges: about 150 ms of rendering


@require("view_calibration")
@require_GET
def calibration(request):
    # The judges compared read every verdict of the rule versions two judges share: they come in a
    # fragment of their own (?part=pairs, fetched once the table is shown; ?pairs=1 without JS),
    # so the table is never slower for them.
    part = request.GET.get("part")
    with_pairs = part == "pairs" or request.GET.get("pairs") == "1"
    try:
        filters, rows, sort, desc = _rows_from_request(request, pairs=with_pairs)
    except DomainError as e:
        return HttpResponseBadRequest(str(e))
    params = request.GET.copy()
    for key in ("sort", "dir", "part", "pairs", "page"):
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
    # A page of rows at a time: the figures are computed for every row (the overall agreement
    # and the export read them all), only the rendering is paged.
    page = Paginator(rows, CALIBRATION_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    for r in page.object_list:
        r.needed = marks_needed(r)
    context = {
        "rows": page.object_list,
        "page": page,
        "overall": cal.calibration_overall(rows),
        "compared": (
            [(r, o) for r in rows for o in r.other_judges if r.judge.name < o.judge.name]
            if with_pairs
            else None
        ),
        "shared": _shared_rule_versions(rows),
        "errors": filters["errors"],
        "filters": {
            **{k: request.GET.get(k, "") for k in ("judge", "group", "status", "rule")},
            "errors": filters["errors"] if filters["errors"] != "exclude" else "",
        },
        "options": {
            "groups": cal.calibration_groups(),
            "judges": cal.calibration_judges(),
            "statuses": RuleVersion.Status.choices,
            "errors": ERRORS_CHOICES,
        },
        "columns": columns,
        "base_query": params.urlencode(),
        "floors": cal.floors_from_settings(),
    }
    if part == "pairs":  # its own URL, fetched after the table: always the fragment
        return render(request, "labeling/calibration.html#judges-compared", context)
    return page_or_fragment(request, "labeling/calibration.html", "cal-results", context)


ERRORS_NOTE = {
    "exclude": "Errored verdicts are counted apart and left out of every figure (errors=exclude).",
    "as_wrong": (
        "Errored verdicts whose call's truth the reviewers settled count as wrong answers in "
        "accuracy, F1, specificity and judge κ (errors=as_wrong); precision and recall leave "
        "them out."
    ),
}


def _markdown(rows, errors: str) -> str:
    def fig(est):
        if est.value is None:
            return "–"
        return f"{est.value:.2f} [{est.ci[0]:.2f}, {est.ci[1]:.2f}]"

    lines = [
        (
            "| Rule | Version | Judge | Status | Marked | Errored (covered) | "
            "Precision [95% CI] | Recall [95% CI] | Accuracy [95% CI] | Judge κ [95% CI] | "
            "Eligible |"
        ),
        "|---|---:|---|---|---:|---:|---|---|---|---|---|",
    ]
    for r in rows:
        rv, c, figs = r.rule_version, r.counts, r.figures
        eligible = "yes" if r.eligible else "no: " + "; ".join(r.why_not)
        lines.append(
            f"| `{rv.rule.rule_id}` | {rv.number} | "
            f"{r.judge.name if r.judge else '–'} | {rv.status} | {c.marked} "
            f"| {c.errored} ({c.errored_covered}) "
            f"| {fig(figs.precision)} | {fig(figs.recall)} | {fig(figs.accuracy)} "
            f"| {fig(figs.judge_kappa)} | {eligible} |"
        )
    lines += ["", ERRORS_NOTE[errors]]
    pairs = [(r, o) for r in rows for o in r.other_judges if r.judge.name < o.judge.name]
    if pairs:
        lines += [
            "",
            "| Rule | Version | Judges | Calls | Agreement [95% CI] | κ [95% CI] |",
            "|---|---:|---|---:|---|---|",
        ]
        for r, o in pairs:
            what = " (positional)" if o.positional else ""
            lines.append(
                f"| `{r.rule_version.rule.rule_id}` | {r.rule_version.number} "
                f"| {r.judge.name} · {o.judge.name}{what} | {o.figures.n} "
                f"| {fig(o.figures.agreement)} | {fig(o.figures.kappa)} |"
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
    "errored",
    "errored_covered",
    "errors",
    "counted",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "f1",
    "specificity",
    "judge_kappa",
    "judge_kappa_low",
    "judge_kappa_high",
    "weighted_precision",
    "weighted_recall",
    "weighted_accuracy",
    "effective_n",
    "reviewer_kappa",
    "waiting",
    "eligible",
    "why_not",
]


def _csv(rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_FIELDS)
    for r in rows:
        d = r.as_dict()
        w = d["weighted"]
        low_high = {
            name: d[f"{name}_ci"] or [None, None]
            for name in ("precision", "recall", "accuracy", "judge_kappa")
        }
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
                d["errored"],
                d["errored_covered"],
                d["errors"],
                d["counted"],
                d["precision"],
                *low_high["precision"],
                d["recall"],
                *low_high["recall"],
                d["accuracy"],
                *low_high["accuracy"],
                d["f1"],
                d["specificity"],
                d["judge_kappa"],
                *low_high["judge_kappa"],
                w["precision"],
                w["recall"],
                w["accuracy"],
                w["effective_n"],
                d["reviewer_kappa"],
                d["waiting"],
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
        filters, rows, _, _ = _rows_from_request(request)
    except DomainError as e:
        return HttpResponseBadRequest(str(e))
    if fmt == "md":
        # text/plain so the browser shows it, ready to copy into a pull request.
        return HttpResponse(
            _markdown(rows, filters["errors"]), content_type="text/plain; charset=utf-8"
        )
    response = HttpResponse(_csv(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="calibration.csv"'
    return response


def _rule_version(pk: int) -> RuleVersion:
    return get_object_or_404(RuleVersion.objects.select_related("rule"), pk=pk)


def _judge(
    request, rule_version, errors: str = "exclude"
) -> tuple[Judge | None, list[cal.CalibrationRow]]:
    rows = cal.calibration_rows(
        rule_version_ids=[rule_version.pk], include_unmarked=False, errors=errors
    )
    judge_id = whole_number(
        request.GET.get("judge") or request.POST.get("judge"), field="judge", low=1, default=None
    )
    if judge_id is not None:
        chosen = [r for r in rows if r.judge.pk == judge_id]
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
    try:
        errors = cal.calibration_filters({"errors": request.GET.get("errors")})["errors"]
    except DomainError as e:
        return HttpResponseBadRequest(str(e))
    row, rows = _judge(request, rv, errors)
    judge_pairs_attach(rows, errors=errors)
    floors = cal.floors_from_settings()
    if row is None:
        row = cal.CalibrationRow(rv, None, cal.Counts(), floors, errors)
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
            ("precision", "Precision", figs.precision, figs.w_precision),
            ("recall", "Recall", figs.recall, figs.w_recall),
            ("accuracy", "Accuracy", figs.accuracy, figs.w_accuracy),
            ("f1", "F1", figs.f1, figs.w_f1),
            ("specificity", "Specificity", figs.specificity, figs.w_specificity),
            ("judge-kappa", "Judge κ", figs.judge_kappa, figs.w_judge_kappa),
        ],
        "errors": errors,
        "errors_choices": ERRORS_CHOICES,
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
    judge_id = whole_number(request.POST.get("judge"), field="judge", low=1, default=None)
    if judge_id is not None:
        judge = get_object_or_404(Judge, pk=judge_id)
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
