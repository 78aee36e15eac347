"""Webhook pages (leads): register a URL for events, and read every delivery and its answer."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.errors import DomainError
from core.permissions import require
from evals.webhooks.events import WEBHOOK_EVENTS
from evals.webhooks.models import Webhook
from evals.webhooks.services import webhook_create, webhook_update


class WebhookForm(forms.Form):
    # The service checks the URL (core.egress), with the same words as the API's.
    url = forms.CharField(max_length=2000, label="URL", widget=forms.URLInput)
    events = forms.MultipleChoiceField(
        choices=[(e, e) for e in WEBHOOK_EVENTS], widget=forms.CheckboxSelectMultiple
    )
    description = forms.CharField(max_length=200, required=False)


def _hooks():
    hooks = list(Webhook.objects.order_by("pk"))
    for h in hooks:
        h.last = h.deliveries.order_by("-created_at", "-pk").first()
    return hooks


@require("manage_webhooks")
@require_http_methods(["GET", "POST"])
def webhook_list(request):
    """The webhooks and a form to register one (POST registers it and opens its page)."""
    form = WebhookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            hook = webhook_create(
                url=d["url"],
                events=d["events"],
                description=d["description"],
                by=request.user.get_username(),
            )
        except DomainError as e:
            form.add_error(e.field if e.field in form.fields else None, e.message)
        else:
            messages.success(request, f"Registered {hook.url}.")
            return redirect("webhook-detail", pk=hook.pk)
    status = 400 if request.method == "POST" else 200
    context = {"hooks": _hooks(), "form": form, "events": WEBHOOK_EVENTS}
    return render(request, "webhooks/webhooks.html", context, status=status)


@require("manage_webhooks")
@require_GET
def webhook_detail(request, pk: int):
    """A webhook, its secret and its deliveries (newest first), each with its answer."""
    hook = get_object_or_404(Webhook, pk=pk)
    page = Paginator(hook.deliveries.order_by("-created_at", "-pk"), 50).get_page(
        request.GET.get("page")
    )
    return render(request, "webhooks/webhook.html", {"hook": hook, "page": page})


@require("manage_webhooks")
@require_POST
def webhook_toggle(request, pk: int):
    """Pause or resume a webhook."""
    hook = get_object_or_404(Webhook, pk=pk)
    hook = webhook_update(webhook=hook, active=not hook.active)
    messages.info(request, f"{hook.url} is {'active' if hook.active else 'paused'}.")
    return redirect("webhook-detail", pk=hook.pk)
