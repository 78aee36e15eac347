"""The voice hooks page (leads): which Docket agent version each platform's agent maps to, the
secret its webhooks are signed with (set here, never shown again), and when one last arrived."""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import DomainError
from core.permissions import require
from evals.ingest.models import VoiceHook
from evals.ingest.services import voice_hook_endpoint, voice_hook_save


class VoiceHookForm(forms.Form):
    platform = forms.ChoiceField(choices=VoiceHook.Platform.choices)
    platform_agent_id = forms.CharField(max_length=200, required=False)
    agent = forms.SlugField(max_length=100)
    agent_version = forms.CharField(max_length=100)
    secret = forms.CharField(max_length=500, min_length=8, required=False)


@require("manage_webhooks")
@require_http_methods(["GET", "POST"])
def voice_hook_list(request):
    """The voice hooks and a form to add one (POST adds it)."""
    form = VoiceHookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            hook = voice_hook_save(
                platform=d["platform"],
                platform_agent_id=d["platform_agent_id"],
                agent=d["agent"],
                agent_version=d["agent_version"],
                secret=d["secret"] or None,
                by=request.user.get_username(),
            )
        except DomainError as e:
            form.add_error(e.field if e.field in form.fields else None, e.message)
        else:
            messages.success(
                request, f"{hook.get_platform_display()} agent mapped to {hook.agent}."
            )
            return redirect("voice-hook-list")
    hooks = list(VoiceHook.objects.select_related("agent").order_by("platform", "pk"))
    for h in hooks:
        h.endpoint = voice_hook_endpoint(h.platform, request)
    status = 400 if request.method == "POST" else 200
    return render(request, "ingest/voice_hooks.html", {"hooks": hooks, "form": form}, status=status)


@require("manage_webhooks")
@require_POST
def voice_hook_toggle(request, pk: int):
    """Pause or resume a voice hook (a paused hook verifies nothing: its platform gets 401)."""
    hook = get_object_or_404(VoiceHook.objects.select_related("agent"), pk=pk)
    hook = voice_hook_save(hook=hook, active=not hook.active)
    messages.info(request, f"{hook} is {'active' if hook.active else 'paused'}.")
    return redirect("voice-hook-list")
