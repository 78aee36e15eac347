"""Browsing pages: calls, the call page, rules, a rule's versions, verdicts (they read verdicts,
so they live with them)."""

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.pages import page_or_fragment
from core.permissions import require
from evals.judging.forms import CallFilterForm, VerdictFilterForm
from evals.judging.registry import CALL_SECTIONS
from evals.judging.selectors import browse


def _page_number(form) -> int:
    return (form.cleaned_data.get("page") if hasattr(form, "cleaned_data") else None) or 1


def _render_list(request, template: str, context: dict, choices):
    """Render the whole list page, or only its #results
    fragment for an htmx filter or paging request."""
    # The filter form's options: only the whole page shows them.
    return page_or_fragment(
        request, template, "results", context, page_context=lambda: {"choices": choices()}
    )


@require("view_console")
@require_GET
def transcript_list(request):
    form = CallFilterForm(request.GET)
    form.is_valid()
    page = browse.transcript_list_page(form.filters(), page=_page_number(form))
    return _render_list(
        request,
        "judging/transcript_list.html",
        {"form": form, "page": page, "filtered": form.filters() != browse.CallFilters()},
        browse.transcript_filter_choices,
    )


@require("view_console")
@require_GET
def transcript_detail(request, external_id):
    call = browse.transcript_detail(external_id)
    if call is None:
        raise Http404("No call with that id.")
    context = {
        "call": call,
        "t": call.transcript,
        # Sections other apps put on the call page (the conversation judge's score).
        "sections": [html for html in (s(request, call.transcript) for s in CALL_SECTIONS) if html],
    }
    return render(request, "judging/transcript_detail.html", context)


@require("view_console")
@require_GET
def rule_list(request):
    q = request.GET.get("q", "").strip()[:200]
    group = request.GET.get("group", "").strip()[:100]
    return render(
        request,
        "judging/rule_list.html",
        {"groups": browse.rule_list_grouped(q=q, group=group), "q": q, "group": group},
    )


@require("view_console")
@require_GET
def rule_detail(request, rule_id):
    found = browse.rule_detail(rule_id)
    if found is None:
        raise Http404("No rule with that id.")
    rule, versions = found
    return render(request, "judging/rule_detail.html", {"rule": rule, "versions": versions})


@require("view_console")
@require_GET
def verdict_list(request):
    form = VerdictFilterForm(request.GET)
    form.is_valid()
    page = browse.verdict_list_page(form.filters(), page=_page_number(form))
    return _render_list(
        request,
        "judging/verdict_list.html",
        {"form": form, "page": page, "filtered": form.filters() != browse.VerdictFilters()},
        browse.verdict_filter_choices,
    )
