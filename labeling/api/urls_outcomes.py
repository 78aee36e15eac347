from django.urls import path

from . import outcomes

urlpatterns = [
    path("outcomes/", outcomes.Outcomes.as_view(), name="api-outcomes"),
    path("outcome-ratings/", outcomes.OutcomeRatings.as_view(), name="api-outcome-ratings"),
    path("outcome-questions/", outcomes.OutcomeQuestions.as_view(), name="api-outcome-questions"),
]
