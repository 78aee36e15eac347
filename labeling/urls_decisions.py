from django.urls import path

from . import views_decisions as v

urlpatterns = [
    path("decisions/", v.decision_accuracy_page, name="decision-accuracy"),
    path("decisions/hard/", v.decision_hard_queue, name="decision-hard-queue"),
    path(
        "review/calls/<str:external_id>/decisions/<int:decision_id>/label/",
        v.review_decision_label,
        name="review-decision-label",
    ),
]
