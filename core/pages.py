"""A page that answers either whole or as one of its fragments, by who asks.

A list page's filters, sorting and paging fetch only the results fragment with htmx and push the
URL; a polled page fetches only its progress. Either way one URL answers two shapes, so the answer
must vary on HX-Request: without `Vary`, the browser's cache or its history can hand the bare
fragment back as the page (Back onto a pushed URL). Every such view answers through
`page_or_fragment`, which sets it, so none can forget.
"""

from collections.abc import Callable

from django.http import HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

STOP_POLLING = 286  # htmx stops polling on this status (django_htmx's HttpResponseStopPolling)


def fragment_wanted(request) -> bool:
    """Whether an htmx request asks for a part of the page: not a boosted link and not a history
    restore, which both need the whole page."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request


def page_or_fragment(
    request,
    template: str,
    fragment: str,
    context: dict,
    *,
    page_context: Callable[[], dict] | None = None,
    status: int = 200,
    stop_polling: bool = False,
) -> HttpResponse:
    """Render `template` whole, or only its partial `fragment` for an htmx request; either way the
    answer varies on HX-Request.

    `page_context` adds what only the whole page shows (a filter form's options). `status` is the
    whole page's: a fragment answers 200 (htmx swaps only a 2xx; the fragment carries any error
    itself), or 286 with `stop_polling` once what it polls has ended.
    """
    if fragment_wanted(request):
        response = render(
            request, f"{template}#{fragment}", context, status=STOP_POLLING if stop_polling else 200
        )
    else:
        if page_context is not None:
            context = {**context, **page_context()}
        response = render(request, template, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response
