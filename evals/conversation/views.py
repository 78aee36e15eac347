"""Conversation judge pages: the figures per agent version (with a "Run the conversation judge"
form), and one version's calls with their scores and findings."""

from django import forms
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.errors import DomainError
from core.permissions import require, user_can
from evals.catalog.models import AgentVersion
from evals.conversation import selectors as sel
from evals.conversation.services import conversation_judge_create
from evals.judging.client import judge_configured
from evals.judging.selectors.runs import agent_version_choices
from evals.judging.services.runs import JudgeRunPlan

CALLS_PER_PAGE = 50


class RunConversationForm(forms.Form):
    agent_version = forms.ChoiceField(required=False, label="Agent version")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent_version"].choices = [("", "every version")] + [
            (v, v) for v in agent_version_choices()
        ]


def _index_context(request, form=None, plan=None) -> dict:
    return {
        "rows": sel.conversation_versions(),
        "form": form or RunConversationForm(),
        "plan": plan,
        "can_run": user_can(request.user, "run_judge"),
        "judge_configured": judge_configured(),
    }


@require("view_console")
@require_GET
def conversation_index(request):
    return render(request, "conversation/conversation.html", _index_context(request))


@require("run_judge")
@require_POST
def conversation_run_start(request):
    """Start a conversation judge run (or estimate it with action=estimate), then show its page."""
    form = RunConversationForm(request.POST)
    if form.is_valid():
        try:
            result = conversation_judge_create(
                agent_version=form.cleaned_data["agent_version"] or None,
                started_by=request.user.get_username(),
                background=True,
                dry_run=request.POST.get("action") == "estimate",
            )
        except DomainError as exc:  # JudgeRunInvalid, an unknown agent version
            form.add_error(None, str(exc))
        else:
            if isinstance(result, JudgeRunPlan):
                return render(
                    request, "conversation/conversation.html", _index_context(request, form, result)
                )
            return redirect("judge-run-detail", pk=result.pk)
    return render(
        request, "conversation/conversation.html", _index_context(request, form), status=400
    )


@require("view_console")
@require_GET
def conversation_version(request, pk: int):
    version = AgentVersion.objects.select_related("agent").filter(pk=pk).first()
    if version is None:
        raise Http404("No such agent version.")
    rows = sel.conversation_versions(version_id=version.pk)
    paginator = Paginator(sel.conversation_version_calls(version), CALLS_PER_PAGE)
    paginator.count = sel.conversation_scored_calls(rows)
    page = paginator.get_page(request.GET.get("page"))
    return render(
        request,
        "conversation/conversation_version.html",
        {
            "version": version,
            "rows": rows,
            "page": page,
            "plan": version.agent.conversation_plan,
        },
    )
