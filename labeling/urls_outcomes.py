from django.urls import path

from . import views_outcomes as v

urlpatterns = [
    path("outcomes/", v.outcomes, name="outcomes"),
    path(
        "outcomes/calls/<str:external_id>/issue/", v.outcome_call_issue, name="outcome-call-issue"
    ),
    path("review/calls/<str:external_id>/outcome/", v.review_outcome, name="review-outcome"),
]
