"""Conversation judge pages: the figures per agent version (with a "Run the conversation judge"
form), and one version's calls with their scores and findings."""

from django import forms
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.permissions import require, user_can
from evals.judge.client import judge_configured
from evals.models import AgentVersion
from evals.selectors import conversation as sel
from evals.selectors.judging import agent_version_choices
from evals.services.conversation import conversation_judge_create
from evals.services.judging import JudgeRunInvalid, JudgeRunPlan


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
    return render(request, "evals/conversation.html", _index_context(request))


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
        except JudgeRunInvalid as exc:
            form.add_error(None, str(exc))
        else:
            if isinstance(result, JudgeRunPlan):
                return render(
                    request, "evals/conversation.html", _index_context(request, form, result)
                )
            return redirect("judge-run-detail", pk=result.pk)
    return render(request, "evals/conversation.html", _index_context(request, form), status=400)


@require("view_console")
@require_GET
def conversation_version(request, pk: int):
    version = AgentVersion.objects.select_related("agent").filter(pk=pk).first()
    if version is None:
        raise Http404("No such agent version.")
    rows = [r for r in sel.conversation_versions() if r.version_id == version.pk]
    return render(
        request,
        "evals/conversation_version.html",
        {
            "version": version,
            "rows": rows,
            "scores": sel.conversation_version_calls(version),
            "plan": version.agent.conversation_plan,
        },
    )
