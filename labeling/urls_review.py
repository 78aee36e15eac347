from django.urls import path

from . import views_review as v

urlpatterns = [
    path("review/", v.review_home, name="review"),
    path("review/next/", v.review_next, name="review-next"),
    path("review/sample/make/", v.review_sample_make, name="review-sample-make"),
    path("review/sample/queue/", v.review_sample_queue, name="review-sample-queue"),
    path("review/calls/<str:external_id>/", v.review_call, name="review-call"),
    path(
        "review/calls/<str:external_id>/progress/",
        v.review_call_progress,
        name="review-call-progress",
    ),
    path("review/calls/<str:external_id>/finish/", v.review_finish, name="review-finish"),
    path("review/calls/<str:external_id>/skip/", v.review_skip, name="review-skip"),
    path("review/calls/<str:external_id>/issues/", v.review_issue, name="review-issue"),
    path("review/calls/<str:external_id>/mark-rest/", v.review_mark_rest, name="review-mark-rest"),
    path("review/calls/<str:external_id>/unmark/", v.review_unmark_many, name="review-unmark-many"),
    path(
        "review/calls/<str:external_id>/verdicts/<int:verdict_id>/mark/",
        v.review_mark,
        name="review-mark",
    ),
    path(
        "review/calls/<str:external_id>/verdicts/<int:verdict_id>/unmark/",
        v.review_unmark,
        name="review-unmark",
    ),
]
