"""Classifier thresholds for leads: per classifier, its confidence distribution and PR curve from
the marks, the lowest threshold reaching a target precision, split by tenant and agent; CSV and
JSON export for operators."""

import csv
import datetime as dt
import io
import json

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from core.errors import DomainError
from core.parsing import calendar_date, whole_number
from core.permissions import require
from labeling.selectors import classifier_thresholds as sel

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 260, 44, 16, 12, 36


def threshold_params(params) -> dict:
    """Return the filters of a thresholds request; ValueError names a bad one."""
    out = {"tenant": params.get("tenant", "")[:200], "agent": params.get("agent", "")[:100]}
    out["category"] = params.get("category", "")[:50]
    try:
        out["judge_id"] = whole_number(params.get("judge"), field="judge", low=1, default=None)
    except DomainError as exc:
        raise ValueError(str(exc)) from None
    try:
        target = float(params.get("target") or sel.DEFAULT_TARGET)
    except ValueError:
        raise ValueError("target: must be a number between 0 and 1") from None
    if not 0 < target <= 1:
        raise ValueError("target: must be a number between 0 and 1")
    out["target"] = target
    try:
        until = calendar_date(params.get("to"), field="to") or timezone.localdate()
        since = calendar_date(params.get("from"), field="from")
    except DomainError as exc:
        raise ValueError(f"{exc.field}: {exc}") from None
    since = since or until - dt.timedelta(days=sel.WINDOW_DAYS - 1)
    if since > until:
        raise ValueError("from: must not be after to")
    out["since"], out["until"] = since, until
    return out


def _x(t: float) -> float:
    return round(LEFT + (WIDTH - LEFT - RIGHT) * t / 100, 1)


def _y(v: float) -> float:
    return round(TOP + (HEIGHT - TOP - BOTTOM) * (1 - v), 1)


def curve_chart(curve, choice) -> dict | None:
    """Return the geometry of the precision and recall by threshold chart (server-drawn SVG)."""
    if not curve or all(p.precision is None and p.recall is None for p in curve):
        return None
    series = []
    for name, attr in (("precision", "precision"), ("recall", "recall")):
        pts = [(p, getattr(p, attr), getattr(p, f"{attr}_ci")) for p in curve]
        pts = [(p, v, ci) for p, v, ci in pts if v is not None]
        line = " ".join(f"{_x(p.threshold)},{_y(v)}" for p, v, _ in pts)
        series.append(
            {
                "name": name,
                "css": f"s-{name}",
                "line": line,
                "points": [
                    (_x(p.threshold), _y(v), f"{name} {v:.2f} at threshold {p.threshold}")
                    for p, v, _ in pts
                ],
                "whiskers": [(_x(p.threshold), _y(ci[1]), _y(ci[0])) for p, _, ci in pts if ci],
            }
        )
    marker = None
    if choice and choice.threshold is not None:
        marker = (_x(choice.threshold), f"lowest threshold reaching {choice.target:.2f}")
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "label_y": HEIGHT - BOTTOM + 18,
        "series": series,
        "yticks": [(_y(v), f"{v:.1f}") for v in (0, 0.25, 0.5, 0.75, 1)],
        "xticks": [(_x(t), t) for t in (0, 20, 40, 60, 80, 100)],
        "marker": marker,
    }


def _bars(hist: dict) -> list[dict]:
    peak = max([*hist["flagged"], *hist["unflagged"], 1])
    return [
        {
            "label": f"{10 * i}–{10 * i + 9 if i < 9 else 100}",
            "flagged": f,
            "unflagged": u,
            "flagged_pct": round(100 * f / peak),
            "unflagged_pct": round(100 * u / peak),
        }
        for i, (f, u) in enumerate(zip(hist["flagged"], hist["unflagged"], strict=True))
    ]


@require("view_calibration")
@require_GET
def classifier_index(request):
    return render(request, "labeling/classifiers.html", {"checks": sel.classifier_checks()})


def _figures(request, rule_id: str):
    if rule_id not in sel.CLASSIFIER_RULES:
        raise Http404(f"No classifier rule {rule_id!r}.")
    params = threshold_params(request.GET)
    return params, sel.classifier_thresholds(rule_id=rule_id, **params)


@require("view_calibration")
@require_GET
def classifier_detail(request, rule_id: str):
    try:
        params, figures = _figures(request, rule_id)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    everything = figures["all"]
    return render(
        request,
        "labeling/classifier_detail.html",
        {
            "rule_id": rule_id,
            "params": params,
            "figures": figures,
            "all": everything,
            "chart": curve_chart(everything.curve, everything.choice),
            "bars": _bars(everything.histogram),
            "judges": sel.classifier_judges(rule_id),
            "query": request.GET.urlencode(),
        },
    )


def export_rows(rule_id: str, figures: dict) -> list[dict]:
    """Return one row per (slice, threshold): the CSV export."""
    rows = []
    for group in [figures["all"], *figures["tenants"], *figures["agents"]]:
        for p in group.curve:
            d = p.as_dict()
            rows.append(
                {
                    "classifier": rule_id,
                    "split": group.split,
                    "key": group.key,
                    "threshold": d["threshold"],
                    "tp": d["tp"],
                    "fp": d["fp"],
                    "fn": d["fn"],
                    "precision": d["precision"],
                    "precision_low": d["precision_ci"][0] if d["precision_ci"] else None,
                    "precision_high": d["precision_ci"][1] if d["precision_ci"] else None,
                    "recall": d["recall"],
                    "recall_low": d["recall_ci"][0] if d["recall_ci"] else None,
                    "recall_high": d["recall_ci"][1] if d["recall_ci"] else None,
                }
            )
    return rows


def figures_json(rule_id: str, params: dict, figures: dict) -> dict:
    return {
        "classifier": rule_id,
        "filters": {  # named as the request names them
            {"since": "from", "until": "to"}.get(k, k): v.isoformat()
            if isinstance(v, dt.date)
            else v
            for k, v in params.items()
            if v not in ("", None)
        },
        "all": figures["all"].as_dict(),
        "tenants": [g.as_dict() for g in figures["tenants"]],
        "agents": [g.as_dict() for g in figures["agents"]],
        "categories": figures["categories"],
    }


@require("view_calibration")
@require_GET
def classifier_export(request, rule_id: str, fmt: str):
    if fmt not in ("csv", "json"):
        raise Http404("Export as csv or json.")
    try:
        params, figures = _figures(request, rule_id)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    name = f"thresholds-{rule_id}.{fmt}"
    if fmt == "json":
        body = json.dumps(figures_json(rule_id, params, figures), indent=1)
        response = HttpResponse(body, content_type="application/json")
    else:
        out = io.StringIO()
        rows = export_rows(rule_id, figures)
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["classifier"])
        writer.writeheader()
        writer.writerows(rows)
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
