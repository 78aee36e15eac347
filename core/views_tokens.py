"""The API tokens page: each user makes, names and revokes their own tokens and sees when each
was last used; a lead (manage_service_accounts) does the same for service accounts. A new key is
shown once, in the answer to the form that made it, never stored."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import DomainError, NotFound
from core.permissions import require, user_can
from core.tokens import (
    api_token_create,
    api_token_revoke,
    api_tokens_of,
    service_account_token_create,
    service_accounts_listed,
)


def _page(request, *, made=None, errors=None, status=200):
    leads = user_can(request.user, "manage_service_accounts")
    return render(
        request,
        "core/tokens.html",
        {
            "tokens": api_tokens_of(request.user),
            "accounts": service_accounts_listed() if leads else None,
            "made": made,
            "errors": errors or {},
            "values": request.POST if request.method == "POST" else {},
            "api_root": request.build_absolute_uri(reverse("api-rules")),
        },
        status=status,
    )


@never_cache
@require("view_console")
@require_http_methods(["GET", "POST"])
def token_list(request):
    """Your tokens and the form to make one (POST makes it and shows its key, once)."""
    if request.method == "GET":
        return _page(request)
    try:
        token, key = api_token_create(user=request.user, name=request.POST.get("name", ""))
    except DomainError as exc:
        return _page(request, errors={"mine": exc.message}, status=400)
    return _page(request, made={"token": token, "key": key}, status=201)


@never_cache
@require("manage_service_accounts")
@require_POST
def service_token_create(request):
    """Make a token for a service account (the account too, in the engineer role, when new)."""
    try:
        token, key = service_account_token_create(
            username=request.POST.get("username", ""),
            name=request.POST.get("name", ""),
            actor=request.user,
        )
    except DomainError as exc:
        return _page(request, errors={"service": f"{exc.field or ''}: {exc.message}"}, status=400)
    return _page(request, made={"token": token, "key": key}, status=201)


@require("view_console")
@require_POST
def token_revoke(request, pk: int):
    """Revoke one of your tokens (or, for a lead, a service account's)."""
    try:
        token = api_token_revoke(token_id=pk, actor=request.user)
    except NotFound as exc:
        raise Http404(exc.message) from None
    messages.success(request, f"Revoked {token.prefix}… ({token.name}): it no longer works.")
    return redirect("token-list")
