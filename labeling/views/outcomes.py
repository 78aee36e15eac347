"""Outcomes: the review page's rating form, the outcomes page (trend, predictors, bad calls
nothing flagged) and an issue form for one such call. Thin views over the outcome selectors and
services."""

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.errors import DomainError
from core.permissions import require
from evals.catalog.models import Agent, Transcript
from evals.rules.models import Severity
from labeling.charts import outcome_chart
from labeling.models import OutcomeQuestion
from labeling.selectors.outcomes import (
    outcome_data,
    outcome_panel_data,
    outcome_question,
    outcome_ratings_visible,
)
from labeling.services.held import NotHeld
from labeling.services.outcomes import outcome_rate

PANEL = "labeling/partials/outcome_panel.html#outcome-panel"


def _field_errors(exc: DomainError) -> dict[str, str]:
    return {field or "rating": message for field, message in exc.field_messages().items()}


@require_POST
@require("review")
def review_outcome(request, external_id):
    transcript = get_object_or_404(
        Transcript.objects.select_related("agent_version__agent"), external_id=external_id
    )
    posted = {
        "question": request.POST.get("question", "").strip(),
        "rating": request.POST.get("rating", "").strip(),
        "reason": request.POST.get("reason", ""),
        "key_factor": request.POST.get("key_factor", ""),
    }
    errors: dict[str, str] = {}
    question = None
    try:
        question = outcome_question(
            agent=transcript.agent_version.agent, key=posted["question"] or None
        )
        outcome_rate(
            reviewer=request.user,
            transcript=transcript,
            rating=posted["rating"] or None,
            reason=posted["reason"],
            key_factor=posted["key_factor"],
            question=question if question.pk else None,
        )
    except NotHeld as exc:  # the service's rule, the API's too
        return HttpResponseBadRequest(exc.message)
    except DomainError as exc:
        errors = _field_errors(exc)
        if posted["rating"] == "" and "rating" in errors:
            errors["rating"] = "pick a rating from 1 to 5."
    if not request.htmx:
        if errors:
            messages.error(request, " ".join(f"{k}: {v}" for k, v in errors.items()))
        else:
            messages.success(request, "Outcome saved.")
        return redirect(reverse("review-call", args=[external_id]) + "#outcome-panel")
    outcome = outcome_panel_data(reviewer=request.user, transcript=transcript)
    key = question.key if question is not None else posted["question"]
    for item in outcome["items"]:
        if item["question"].key != key:
            continue
        if errors:  # keep what was typed, and say what is wrong beside its field
            rating = posted["rating"]
            item["form"] = {
                "rating": int(rating) if rating.isascii() and rating.isdigit() else None,
                "reason": posted["reason"],
                "key_factor": posted["key_factor"],
            }
            item["errors"] = errors
        else:
            item["saved"] = True
    response = render(request, PANEL, {"call": transcript, "outcome": outcome})
    if errors:
        response.status_code = 200  # htmx swaps only 2xx answers; the errors are in the panel
    return response


@require_GET
@require("view_calibration")
def outcomes(request):
    agents = list(Agent.objects.filter(outcome_questions__ratings__isnull=False).distinct())
    params = request.GET.copy()
    if not params.get("agent") and agents:
        params["agent"] = agents[0].name
    error, data = "", None
    try:
        data = outcome_data(params) if params.get("agent") else None
    except DomainError as exc:
        error = str(exc)
    questions = (
        OutcomeQuestion.objects.filter(agent__name=data["agent"])
        if data
        else OutcomeQuestion.objects.none()
    )
    return render(
        request,
        "labeling/outcomes.html",
        {
            "data": data,
            "error": error,
            "agents": agents,
            "questions": questions,
            "chart": outcome_chart(data["trend"], period=data["by"]) if data else None,
            "worth_a_look": [p for p in data["predictors"] if p["worth_a_look"]] if data else [],
        },
    )


@require_GET
@require("review")
def outcome_call_issue(request, external_id):
    """An issue row form for one call with a bad outcome (it posts to the review page's form)."""
    transcript = get_object_or_404(
        Transcript.objects.select_related("agent_version__agent"), external_id=external_id
    )
    ratings, others_hidden = outcome_ratings_visible(viewer=request.user, transcript=transcript)
    return render(
        request,
        "labeling/outcome_issue.html",
        {
            "call": transcript,
            "severities": Severity.choices,
            "issue_rows": transcript.issue_rows.filter(reporter=request.user).order_by("number"),
            "all_rows": transcript.issue_rows.order_by("number"),
            "ratings": ratings,
            "others_hidden": others_hidden,
            "issue_next": request.get_full_path(),
        },
    )
