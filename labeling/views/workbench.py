"""The rule workbench's pages: a rule's drafts compared, a new draft, a draft with its estimate,
its run's progress (polled) and its result, saving it as the next version."""

import json

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from core import parsing
from core.errors import DomainError
from core.permissions import require, user_can
from evals.judging import prompt as jp
from evals.judging.client import judge_configured, judge_settings
from evals.judging.selectors.runs import judge_run_summary
from evals.rules.models import Rule
from evals.rules.selectors import rule_version_current
from evals.workbench.services import draft_run_finished
from labeling.models import IssueRow
from labeling.selectors import workbench as sel
from labeling.services import workbench as svc


def _rule_or_404(rule_id: str) -> Rule:
    return get_object_or_404(Rule, rule_id=rule_id)


def _draft_or_404(pk: int):
    draft = sel.draft_get(pk)
    if draft is None:
        raise Http404("No such draft.")
    return draft


def _detector(text: str) -> dict | None:
    if not (text or "").strip():
        return None
    try:
        value = parsing.json_value(text)
    except parsing.ParseProblem as exc:
        raise DomainError(f"not JSON ({exc.reason})", field="detector") from None
    if not isinstance(value, dict):
        raise DomainError('a JSON object such as {"name": ..., ...}', field="detector")
    return value


@require("edit_rules")
@require_GET
def workbench_index(request):
    chosen = (request.GET.get("rule") or "").strip()
    if chosen and Rule.objects.filter(rule_id=chosen).exists():
        return redirect("workbench-rule", rule_id=chosen)
    rules = Rule.objects.filter(status=Rule.Status.ACTIVE).order_by("rule_id")
    return render(
        request,
        "labeling/workbench_index.html",
        {"with_drafts": sel.workbench_rules(), "rules": rules},
    )


def _rule_context(request, rule: Rule, *, form=None, error: DomainError | None = None) -> dict:
    versions = list(rule.versions.order_by("-number"))
    base_pk = (form or {}).get("base") or request.GET.get("base") or ""
    base = next((v for v in versions if str(v.pk) == str(base_pk)), None)
    base = base or sel.workbench_default_base(rule)
    current = rule_version_current(rule)
    form = form or {
        "text": base.text if base else "",
        "detector": _json(base.detector or rule.detector) if base else "",
        "model": "",
        "prompt_version": "",
        "note": "",
        "row": request.GET.get("row", ""),
    }
    return {
        "rule": rule,
        "versions": versions,
        "base": base,
        "current": current,
        "is_detector": bool(rule.detector),
        "rows": sel.workbench_drafts(rule),
        "form": form,
        "errors": error.field_messages() if error else {},
        "default_model": judge_settings().model,
        "prompt_versions": jp.PROMPT_VERSIONS,
    }


def _json(value) -> str:
    return json.dumps(value, indent=1) if value else ""


@require("edit_rules")
@require_GET
def workbench_rule(request, rule_id: str):
    rule = _rule_or_404(rule_id)
    return render(request, "labeling/workbench_rule.html", _rule_context(request, rule))


@require("edit_rules")
@require_POST
def workbench_draft_create(request, rule_id: str):
    """Make a draft from the rule's workbench, or from an issue row's "fix the rule" (`row`)."""
    rule = _rule_or_404(rule_id)
    fields = ("base", "text", "detector", "model", "prompt_version", "note", "row")
    form = {k: request.POST.get(k, "") for k in fields}
    try:
        row = None
        if form["row"].strip():
            number = parsing.whole_number(form["row"], field="row", low=1, high=parsing.MAX_INT32)
            row = IssueRow.objects.filter(number=number).first()
            if row is None:
                raise DomainError(f"no issue row {number}", field="row")
        base = None
        if form["base"].strip():
            base_id = parsing.whole_number(form["base"], field="base", low=1)
            base = rule.versions.filter(pk=base_id).select_related("rule").first()
        if base is None and row is not None and row.rule_version_id:
            base = rule.versions.filter(pk=row.rule_version_id).select_related("rule").first()
        base = base or sel.workbench_default_base(rule)
        if base is None:
            raise DomainError(f"{rule.rule_id} has no version yet", field="base")
        draft = svc.workbench_draft_create(
            base=base,
            text=form["text"],
            detector=_detector(form["detector"]) if rule.detector else None,
            model=form["model"].strip(),
            prompt_version=form["prompt_version"].strip(),
            note=form["note"],
            row=row,
            source="" if row else "the rule's workbench",
            by=request.user,
        )
    except DomainError as exc:
        context = _rule_context(request, rule, form=form, error=exc)
        return render(request, "labeling/workbench_rule.html", context, status=400)
    messages.success(request, f"Draft {draft.pk} made: check the estimate, then run it.")
    return redirect("workbench-draft", pk=draft.pk)


def _run_context(request, draft) -> dict:
    run = sel.draft_latest_run(draft)
    if run is None:
        return {"draft": draft, "run": None}
    finished = draft_run_finished(run)
    return {
        "draft": draft,
        "run": run,
        "finished": finished,
        "summary": judge_run_summary(run.judge_run) if run.judge_run else None,
        "result": sel.workbench_result(run),
    }


@require("edit_rules")
@require_GET
def workbench_draft(request, pk: int):
    draft = _draft_or_404(pk)
    context = _run_context(request, draft)
    error = None
    try:
        estimate = sel.workbench_estimate(draft=draft, size=request.GET.get("size"))
    except DomainError as exc:
        error, estimate = exc, sel.workbench_estimate(draft=draft)
    current = rule_version_current(draft.rule)
    context.update(
        {
            "estimate": estimate,
            "size_error": error,
            "current": current,
            "can_run": user_can(request.user, "run_judge"),
            "can_say_meaning": user_can(request.user, "promote"),
            "judge_configured": judge_configured(),
            "saved_as": draft.saved_as,
        }
    )
    return render(request, "labeling/workbench_draft.html", context)


@require("edit_rules")
@require_GET
def workbench_draft_progress(request, pk: int):
    """The run's section of the draft page; polled while the run works (286 when it ends)."""
    draft = _draft_or_404(pk)
    context = _run_context(request, draft)
    if context["run"] is None:
        raise Http404("This draft has not been run.")
    html = render_to_string("labeling/workbench_draft.html#workbench-run", context, request)
    if context["finished"]:
        return HttpResponseStopPolling(html)
    return render(request, "labeling/workbench_draft.html#workbench-run", context)


@require("run_judge")
@require_POST
def workbench_draft_run(request, pk: int):
    draft = _draft_or_404(pk)
    try:
        svc.workbench_run_start(
            draft=draft,
            size=sel.workbench_size_clean(request.POST.get("size")),
            by=request.user,
            background=True,
        )
    except DomainError as exc:
        messages.error(request, str(exc))
    url = reverse("workbench-draft", args=[draft.pk])
    size = request.POST.get("size", "")
    shown = size.isascii() and size.isdigit()
    return redirect(f"{url}?size={size}#workbench-run" if shown else url)


@require("edit_rules")
@require_POST
def workbench_draft_save(request, pk: int):
    draft = _draft_or_404(pk)
    try:
        version = svc.workbench_draft_save(draft=draft, by=request.user)
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("workbench-draft", pk=draft.pk)
    messages.success(
        request,
        f"{draft.rule.rule_id} v{version.number} saved as a candidate. Promotion still needs its "
        "own marks: the daily sample draws first the calls where it and the version it replaces "
        "disagree.",
    )
    return redirect(reverse("rule-detail", args=[draft.rule.rule_id]) + f"#v{version.number}")


@require("promote")
@require_http_methods(["POST"])
def workbench_draft_meaning(request, pk: int):
    draft = _draft_or_404(pk)
    try:
        svc.workbench_meaning_set(
            draft=draft,
            changes_meaning=request.POST.get("changes_meaning") == "yes",
            reason=request.POST.get("reason", ""),
            by=request.user,
        )
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            "Noted: the text changes the rule's meaning; version "
            f"{draft.base.number}'s truth is not carried."
            if request.POST.get("changes_meaning") == "yes"
            else f"Noted: the text clarifies the rule; version {draft.base.number}'s truth "
            "carries.",
        )
    return redirect("workbench-draft", pk=draft.pk)
