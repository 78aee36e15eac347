"""The issue sheet and its triage pages: thin views over
labeling.selectors.issue_rows and services.triage."""

from django.contrib import messages
from django.http import Http404, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.errors import DomainError
from core.pages import page_or_fragment
from core.parsing import MAX_INT32, whole_number
from core.permissions import require
from evals.judging.services.runs import judge_run_plan
from evals.rules.detectors import DETECTORS
from evals.rules.models import Rule, Severity
from evals.rules.selectors import rule_version_current
from labeling.models import IssueRow
from labeling.selectors import issue_rows as sel
from labeling.selectors.issue_row_call import issue_row_call
from labeling.selectors.issue_rows.sheet import SORT_LABELS
from labeling.services import triage


def _row_or_404(number: int) -> IssueRow:
    try:
        return sel.issue_row_detail(number)
    except IssueRow.DoesNotExist:
        raise Http404(f"No issue row {number}.") from None


def _base_query(request, *drop: str) -> str:
    params = request.GET.copy()
    for key in ("after", "before", "page", *drop):
        params.pop(key, None)
    return params.urlencode()


# Sortable headings: (sort key, label, the sort a first click asks for).
SORTABLE = (
    ("number", "Row", "-number"),
    ("severity", "Severity", "severity"),
    ("status", "Status", "status"),
)


def _sort_columns(sort: str) -> list[dict]:
    """Each sortable heading: the sort its link asks for (the other direction when it is the
    current one), and how it is sorted now (the arrow, aria-sort and words for it)."""
    columns = []
    for key, label, first in SORTABLE:
        current = sort.lstrip("-") == key
        desc = sort.startswith("-")
        columns.append(
            {
                "key": key,
                "label": label,
                "next": (key if desc else f"-{key}") if current else first,
                "aria": ("descending" if desc else "ascending") if current else "",
                "arrow": ("▼" if desc else "▲") if current else "↕",
                "now": SORT_LABELS[sort] if current else "",
            }
        )
    return columns


@require("triage")
@require_GET
def issue_sheet(request):
    error = None
    try:
        filters = sel.issue_sheet_filters_parse(request.GET)
        page = sel.issue_sheet_page(
            filters=filters,
            after=request.GET.get("after", ""),
            before=request.GET.get("before", ""),
        )
    except sel.IssueRowFilterError as exc:
        error = exc
        filters = sel.SheetFilters()
        page = sel.issue_sheet_page(filters=filters)
    context = {
        "filters": filters,
        "page": page,
        "error": error,
        "base_query": _base_query(request),
        "sort_query": _base_query(request, "sort"),
        "sort_columns": {c["key"]: c for c in _sort_columns(filters.sort)},
        "assignees": sel.assignable_users(),
        "statuses": IssueRow.Status.choices,
        "next_url": request.get_full_path(),
    }
    # htmx swaps only 2xx answers: the fragment carries the error message itself.
    return page_or_fragment(
        request,
        "labeling/issue_sheet.html",
        "sheet-table",
        context,
        page_context=lambda: {"options": sel.issue_sheet_options()},
        status=400 if error else 200,
    )


@require("triage")
@require_GET
def issue_sheet_export(request):
    try:
        filters = sel.issue_sheet_filters_parse(request.GET)
    except sel.IssueRowFilterError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    return csv_response(filters, base_url=request.build_absolute_uri("/").rstrip("/"))


def csv_response(filters, *, base_url: str) -> StreamingHttpResponse:
    """Return the filtered sheet as a streamed CSV download."""
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M")
    response = StreamingHttpResponse(
        sel.issue_sheet_csv(filters, base_url=base_url), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="issue-rows-{stamp}.csv"'
    return response


def _bars(
    days,
    series: dict,
    keys: list[str],
    *,
    share: bool,
    height: int = 110,
    bar: int = 14,
    gap: int = 5,
):
    """Return stacked bars (x, segments with y and height) for a small server-side SVG."""
    totals = [sum(series.get(d, {}).get(k, 0) for k in keys) for d in days]
    top = max(totals or [0]) or 1
    out = []
    for i, (day, total) in enumerate(zip(days, totals)):
        y, segments = height, []
        for k in keys:
            n = series.get(day, {}).get(k, 0)
            if not n:
                continue
            h = round((n / total if share else n / top) * height, 1)
            y = round(y - h, 1)
            segments.append({"key": k, "n": n, "y": y, "h": h, "share": round(100 * n / total)})
        out.append(
            {"x": i * (bar + gap), "w": bar, "day": day, "total": total, "segments": segments}
        )
    # A date under every seventh bar, counted back from today so the newest day is always labelled.
    ticks = [
        {"x": b["x"] + bar / 2, "day": b["day"]}
        for i, b in enumerate(out)
        if (len(out) - 1 - i) % 7 == 0
    ]
    return {
        "bars": out,
        "ticks": ticks,
        "width": len(days) * (bar + gap) + 12,
        "height": height,
        "full": height + 16,
        "label_y": height + 12,
        "top": top if not share else 100,
        "empty": not any(totals),
    }


@require("triage")
@require_GET
def issue_trends(request):
    trends = sel.issue_trends(days=28)
    outcome_keys = [k for k, _ in trends.outcomes]
    context = {
        "trends": trends,
        "outcomes": trends.outcomes,
        "rows_chart": _bars(trends.days, trends.rows_by_outcome, outcome_keys, share=False),
        "found_chart": _bars(
            trends.days, trends.found, ["new_failures", "judge_wrong"], share=True
        ),
        "reviewed_chart": _bars(
            trends.days, trends.reviewed, ["uniform", "judge_check"], share=True
        ),
    }
    return page_or_fragment(request, "labeling/issue_trends.html", "trends-panel", context)


def _judge_plan(row: IssueRow, steps: list[dict]):
    """What "Run the judge on this call" would do, so the button says before it is pressed
    whether it needs a model (None when the row has no such step)."""
    if not row.rule_id or not any(s["step"] == "judged" and not s["done"] for s in steps):
        return None
    try:
        return judge_run_plan(
            transcript_ids=[row.transcript.external_id], rule_ids=[row.rule.rule_id]
        )
    except DomainError:  # the rule is no longer active: the run would say so
        return None


def _detail_context(row: IssueRow, **extra) -> dict:
    progress = (
        sel.rule_version_progress([row.rule_version_id]).get(row.rule_version_id)
        if row.rule_version_id
        else None
    )
    steps = sel.issue_row_next_steps(row, progress)
    return {
        "row": row,
        "call_url": sel.call_link(row),
        "steps": steps,
        "judge_plan": _judge_plan(row, steps),
        "events": sel.issue_row_events(row),
        "assignees": sel.assignable_users(),
        "statuses": IssueRow.Status.choices,
        "suggested": "" if row.outcome else sel.issue_row_suggested_way(row),
        "in_call": issue_row_call(row),
        "posted": {},
        **extra,
    }


@require("triage")
@require_GET
def issue_row_detail(request, number: int):
    row = _row_or_404(number)
    return render(request, "labeling/issue_row_detail.html", _detail_context(row))


def _action(request, number: int, do):
    """Run one triage service on the row: redirect back
    on success, re-render with the error on failure."""
    row = _row_or_404(number)
    try:
        message = do(row)
    except triage.TriageError as exc:
        # The error goes beside its field and what was typed stays there.
        context = _detail_context(row, error=exc, posted=request.POST)
        return render(request, "labeling/issue_row_detail.html", context, status=400)
    messages.success(request, message)
    return redirect("issue-row-detail", number=number)


@require("triage")
@require_POST
def issue_sheet_bulk(request):
    """Assign, or set the status of, every ticked row at once (all or none)."""
    numbers = [
        whole_number(n, field="row", low=1, high=MAX_INT32)
        for n in request.POST.getlist("row")
        if n.strip()
    ]
    action = request.POST.get("action", "")
    try:
        if action == "assign":
            username = request.POST.get("assignee", "").strip()
            n = triage.issue_rows_assign_many(
                numbers=numbers, actor=request.user, assignee=triage.assignee_resolve(username)
            )
            messages.success(
                request, f"{n} row{'s' if n != 1 else ''} assigned to {username or 'nobody'}."
            )
        elif action == "status":
            status = request.POST.get("status", "")
            n = triage.issue_rows_set_status_many(
                numbers=numbers, actor=request.user, status=status
            )
            messages.success(
                request, f"{n} row{'s' if n != 1 else ''} now {IssueRow.Status(status).label}."
            )
        else:
            raise triage.TriageError("action", "choose assign or status")
    except triage.TriageError as exc:
        messages.error(request, f"{exc.field}: {exc.message}")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("issue-sheet")
    return redirect(target)


@require("triage")
@require_POST
def issue_row_assign(request, number: int):
    def do(row):
        username = request.POST.get("assignee", "").strip()
        assignee = triage.assignee_resolve(username)
        triage.issue_row_assign(row=row, actor=request.user, assignee=assignee)
        return (
            f"Row {row.number} assigned to {username}."
            if username
            else f"Row {row.number} unassigned."
        )

    return _action(request, number, do)


@require("triage")
@require_POST
def issue_row_status(request, number: int):
    def do(row):
        status = request.POST.get("status", "")
        triage.issue_row_set_status(
            row=row, actor=request.user, status=status, reason=request.POST.get("reason", "")
        )
        return f"Row {row.number} is now {IssueRow.Status(status).label}."

    return _action(request, number, do)


@require("triage")
@require_POST
def issue_row_duplicate(request, number: int):
    def do(row):
        raw = request.POST.get("duplicate_of", "").strip().lstrip("#")
        try:
            of = whole_number(raw, field="duplicate_of", low=1, high=MAX_INT32)
        except DomainError:
            raise triage.TriageError(
                "duplicate_of", "give the number of the row this one duplicates"
            ) from None
        target = triage.duplicate_target_resolve(of)
        triage.issue_row_mark_duplicate(
            row=row, actor=request.user, of=target, reason=request.POST.get("reason", "")
        )
        return f"Row {row.number} closed as a duplicate of row {target.number}."

    return _action(request, number, do)


@require("triage")
@require_POST
def issue_row_wont_fix(request, number: int):
    def do(row):
        triage.issue_row_close_wont_fix(
            row=row, actor=request.user, reason=request.POST.get("reason", "")
        )
        return f"Row {row.number} closed as won't fix."

    return _action(request, number, do)


@require("triage")
@require_POST
def issue_row_comment(request, number: int):
    def do(row):
        triage.issue_row_comment(row=row, actor=request.user, text=request.POST.get("text", ""))
        return "Comment added."

    return _action(request, number, do)


@require("triage")
@require_http_methods(["GET", "POST"])
def issue_row_write_rule(request, number: int):
    row = _row_or_404(number)
    prefill = sel.issue_row_rule_prefill(row)
    values, error = prefill, None
    if request.method == "POST":
        values = {
            **prefill,
            **{
                k: request.POST.get(k, "")
                for k in ("rule_id", "group", "text", "severity", "phase")
            },
        }
        try:
            version = triage.issue_row_write_rule(
                row=row,
                actor=request.user,
                rule_id=values["rule_id"],
                group=values["group"],
                text=values["text"],
                severity=values["severity"],
                phase=values["phase"],
                safety=request.POST.get("safety") == "on",
            )
        except triage.TriageError as exc:
            error = exc
        else:
            messages.success(
                request, f"Draft rule {version.rule.rule_id} v1 written from row {row.number}."
            )
            return redirect("issue-row-detail", number=number)
    context = {
        "row": row,
        "values": values,
        "error": error,
        "severities": Severity.choices,
        "call_url": sel.call_link(row),
    }
    return render(request, "labeling/issue_write_rule.html", context, status=400 if error else 200)


def _detector_choices() -> list[dict]:
    return [
        {
            "name": d.name,
            "doc": d.doc.splitlines()[0] if d.doc else "",
            "params": [
                {
                    "name": p,
                    "default": d.params[p],
                    "type": d.types.get(p, str).__name__,
                    "default_text": _param_text(d.params[p]),
                }
                for p in d.params
            ],
        }
        for d in sorted(DETECTORS.values(), key=lambda d: d.name)
    ]


def _param_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value)
    return "" if value is None else str(value)


@require("triage")
@require_http_methods(["GET", "POST"])
def issue_row_add_signal(request, number: int):
    row = _row_or_404(number)
    prefill = sel.issue_row_signal_prefill(row)
    values = {
        "rule_id": prefill["rule_id"],
        "group": prefill["group"],
        "severity": prefill["severity"],
        "text": "",
        "detector": request.GET.get("detector", ""),
        "request": "",
        "mode": "create",
    }
    error = None
    if request.method == "POST":
        mode = request.POST.get("mode", "")
        values.update(
            {
                k: request.POST.get(k, "")
                for k in ("rule_id", "group", "severity", "text", "detector", "request", "rule")
            },
            mode=mode,
        )
        try:
            done = triage.issue_row_add_signal(
                row=row,
                actor=request.user,
                way=mode,
                rule=values["rule"],
                detector=(
                    triage.detector_spec_from_form(values["detector"], request.POST)
                    if mode == "create"
                    else None
                ),
                rule_id=values["rule_id"],
                group=values["group"],
                text=values["text"],
                severity=values["severity"],
                request=values["request"],
            )
            linked = done.rule.rule_id if done.rule else ""
            message = {
                "link": f"Row {row.number} linked to detector rule {linked}.",
                "create": f"Detector rule {linked} created and linked to row {row.number}.",
                "request": f"Detector request recorded on row {row.number}.",
            }[mode]
        except triage.TriageError as exc:
            error = exc
        else:
            messages.success(request, message)
            return redirect("issue-row-detail", number=number)
    detectors = _detector_choices()
    posted = request.POST if request.method == "POST" else {}
    for d in detectors:
        for p in d["params"]:
            p["value"] = posted.get(f"param_{d['name']}_{p['name']}", p["default_text"])
    context = {
        "row": row,
        "values": values,
        "error": error,
        "severities": Severity.choices,
        "detector_rules": prefill["detector_rules"],
        "detectors": detectors,
        "call_url": sel.call_link(row),
    }
    return render(request, "labeling/issue_add_signal.html", context, status=400 if error else 200)


@require("triage")
@require_http_methods(["GET", "POST"])
def issue_row_fix_rule(request, number: int):
    row = _row_or_404(number)
    choices = sel.issue_row_fix_choices(row)
    source = request.POST if request.method == "POST" else request.GET
    rule_id = (
        source.get("rule")
        or (row.rule.rule_id if row.rule else "")
        or (choices["likely"][0].rule_id if choices["likely"] else "")
    )
    rule = Rule.objects.filter(rule_id=rule_id).first() if rule_id else None
    current = rule_version_current(rule) if rule else None
    text = (
        request.POST.get("text", "")
        if request.method == "POST"
        else (current.text if current else "")
    )
    error = None
    if request.method == "POST":
        try:
            if rule is None:
                raise triage.TriageError("rule", "pick the rule to fix")
            version = triage.issue_row_fix_rule(row=row, actor=request.user, rule=rule, text=text)
        except triage.TriageError as exc:
            error = exc
        else:
            messages.success(
                request,
                f"{rule.rule_id} v{version.number} saved as a candidate; it replaces "
                f"v{current.number} in the gate only once calibrated and promoted."
                if current
                else f"{rule.rule_id} v1 saved.",
            )
            return redirect("issue-row-detail", number=number)
    context = {
        "row": row,
        "rule": rule,
        "current": current,
        "text": text,
        "error": error,
        "choices": choices,
        "call_url": sel.call_link(row),
        "judged": sel.issue_row_judged_at_turn(row),
    }
    if request.method == "GET":  # picking another rule swaps only the editor
        return page_or_fragment(request, "labeling/issue_fix_rule.html", "fix-editor", context)
    return render(request, "labeling/issue_fix_rule.html", context, status=400 if error else 200)
