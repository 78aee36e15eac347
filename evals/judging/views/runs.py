"""Judge-run pages: the list with the "Run judge" form,
and a run page that polls while the run works."""

import re

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from core.errors import DomainError
from core.permissions import require, user_can
from evals.judging.client import judge_configured
from evals.judging.selectors import runs as sel
from evals.judging.services.runs import (
    JudgeRunPlan,
    judge_run_create,
    judge_run_resume,
)

_SPLIT = re.compile(r"[\s,]+")


class RunJudgeForm(forms.Form):
    agent_version = forms.ChoiceField(required=False, label="Agent version")
    rules = forms.CharField(
        required=False,
        max_length=2000,
        label="Rules",
        help_text="Rule ids, patterns (asking.*) or groups; empty: every active rule.",
    )
    transcripts = forms.CharField(
        required=False,
        max_length=20000,
        label="Calls",
        help_text="Call ids; empty: every call (of the version chosen).",
    )
    detectors_only = forms.BooleanField(required=False, label="Detector rules only (free)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent_version"].choices = [("", "every version")] + [
            (v, v) for v in sel.agent_version_choices()
        ]

    def clean_rules(self) -> list[str]:
        return [r for r in _SPLIT.split(self.cleaned_data["rules"]) if r]

    def clean_transcripts(self) -> list[str]:
        return [t for t in _SPLIT.split(self.cleaned_data["transcripts"]) if t]


def _list_context(request, form=None, plan=None):
    runs = list(sel.judge_run_list()[:50])
    return {
        "runs": runs,
        "form": form or RunJudgeForm(),
        "plan": plan,
        "can_run": user_can(request.user, "run_judge"),
        "judge_configured": judge_configured(),
    }


@require("view_console")
@require_GET
def judge_run_list(request):
    return render(request, "judging/judge_runs.html", _list_context(request))


@require("run_judge")
@require_POST
def judge_run_start(request):
    """Start a run (or estimate one with action=estimate), then show its page."""
    form = RunJudgeForm(request.POST)
    estimate = request.POST.get("action") == "estimate"
    if form.is_valid():
        d = form.cleaned_data
        try:
            result = judge_run_create(
                transcript_ids=d["transcripts"] or None,
                rule_ids=d["rules"] or None,
                agent_version=d["agent_version"] or None,
                detectors_only=d["detectors_only"],
                started_by=request.user.get_username(),
                background=True,
                dry_run=estimate,
            )
        except DomainError as exc:  # JudgeRunInvalid, an unknown agent version
            form.add_error(None, str(exc))
        else:
            if isinstance(result, JudgeRunPlan):
                template = (
                    "judging/judge_runs.html#run-form"
                    if request.htmx
                    else "judging/judge_runs.html"
                )
                return render(request, template, _list_context(request, form, result))
            return redirect("judge-run-detail", pk=result.pk)
    template = "judging/judge_runs.html#run-form" if request.htmx else "judging/judge_runs.html"
    return render(request, template, _list_context(request, form), status=400)


@require("view_console")
@require_GET
def judge_run_detail(request, pk: int):
    run = sel.judge_run_get(pk)
    if run is None:
        raise Http404("No such judge run.")
    finished = sel.judge_run_finished(run)
    context = {
        "run": run,
        "summary": sel.judge_run_summary(run),
        "finished": finished,
        "stale": sel.judge_run_stale(run),
        "errors": sel.judge_run_error_groups(run) if finished else [],
        "needs_model": sel.judge_run_needs_model(run) if finished else [],
    }
    if request.htmx:
        html = render_to_string("judging/judge_run.html#run-progress", context, request=request)
        return (
            HttpResponseStopPolling(html)
            if finished
            else render(request, "judging/judge_run.html#run-progress", context)
        )
    return render(request, "judging/judge_run.html", context)


@require("run_judge")
@require_POST
def judge_run_resume_view(request, pk: int):
    """Queue a stuck run's remaining checks again."""
    run = sel.judge_run_get(pk)
    if run is None:
        raise Http404("No such judge run.")
    if run.finished_at is None:
        n = judge_run_resume(run_id=run.pk, background=True)
        messages.info(request, f"Queued {n} remaining check{'s' if n != 1 else ''} again.")
    return redirect("judge-run-detail", pk=run.pk)
