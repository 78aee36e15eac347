"""Eval-run pages: the list with the "Run an eval" form, and a run page that polls while the run
works, then shows each row's score, reason or error and the comparison with the last green run."""

from django import forms
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.errors import DomainError
from core.pages import page_or_fragment
from core.permissions import require, user_can
from evals.catalog.models import AgentVersion
from evals.catalog.selectors import agent_version_resolve
from evals.evalruns import selectors as sel
from evals.evalruns.services import RUBRIC_NAMES, EvalRunPlan, dataset_resolve, eval_run_create


class EvalRunForm(forms.Form):
    dataset = forms.ChoiceField(label="Dataset")
    agent_version = forms.ChoiceField(label="Agent version")
    rubric = forms.ChoiceField(label="Rubric", choices=[(r, r) for r in RUBRIC_NAMES])
    threshold = forms.IntegerField(label="Pass at", min_value=0, max_value=100, initial=70)
    rubric_text = forms.CharField(
        label="Custom rubric",
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    recorded = forms.BooleanField(label="Score recorded outputs (no agent calls)", required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = sel.dataset_list().values_list("name", flat=True).distinct()
        self.fields["dataset"].choices = [(n, n) for n in sorted(set(names))]
        self.fields["agent_version"].choices = [
            (f"{a}:{v}", f"{a} {v}")
            for a, v in AgentVersion.objects.order_by("agent__name", "-version").values_list(
                "agent__name", "version"
            )
        ]


def _list_context(request, form=None, plan=None):
    return {
        "runs": list(sel.eval_run_list()[:50]),
        "datasets": list(sel.dataset_list()[:50]),
        "form": form or EvalRunForm(),
        "plan": plan,
        "can_run": user_can(request.user, "run_judge"),
    }


@require("view_console")
@require_GET
def eval_run_list(request):
    return render(request, "evalruns/list.html", _list_context(request))


@require("run_judge")
@require_POST
def eval_run_start(request):
    """Start a run (or estimate one with action=estimate), then show its page."""
    form = EvalRunForm(request.POST)
    estimate = request.POST.get("action") == "estimate"
    template = "evalruns/list.html#run-form" if request.htmx else "evalruns/list.html"
    if form.is_valid():
        d = form.cleaned_data
        try:
            result = eval_run_create(
                dataset=dataset_resolve(d["dataset"]),
                agent_version=agent_version_resolve(d["agent_version"], what="agent version"),
                rubric=d["rubric"],
                rubric_text=d["rubric_text"],
                threshold=d["threshold"],
                recorded=d["recorded"],
                dry_run=estimate,
                started_by=request.user.get_username(),
                background=True,
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            if isinstance(result, EvalRunPlan):
                return render(request, template, _list_context(request, form, result))
            return redirect("eval-run-detail", pk=result.pk)
    return render(request, template, _list_context(request, form), status=400)


@require("view_console")
@require_GET
def eval_run_detail(request, pk: int):
    run = sel.eval_run_get(pk)
    if run is None:
        raise Http404("No such eval run.")
    finished = sel.eval_run_finished(run)
    context = {
        "run": run,
        "summary": sel.eval_run_summary(run),
        "finished": finished,
        "rows": list(sel.eval_run_rows(run)) if finished else [],
    }
    return page_or_fragment(
        request, "evalruns/run.html", "run-progress", context, stop_polling=finished
    )
