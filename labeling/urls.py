from django.urls import path
from rest_framework.routers import SimpleRouter

from labeling.api import calibration as calibration_api
from labeling.api import decisions as decisions_api
from labeling.api import marks_import as marks_import_api
from labeling.api import outcomes as outcomes_api
from labeling.api import review as review_api
from labeling.api import workbench as workbench_api
from labeling.api.classifier_thresholds import ClassifierThresholds
from labeling.api.issue_rows import IssueRowViewSet
from labeling.views import (
    calibration,
    classifiers,
    decisions,
    issues,
    outcomes,
    review,
    workbench,
)

urlpatterns = [
    path("issues/", issues.issue_sheet, name="issue-sheet"),
    path("issues/export.csv", issues.issue_sheet_export, name="issue-sheet-export"),
    path("issues/trends/", issues.issue_trends, name="issue-trends"),
    path("issues/bulk/", issues.issue_sheet_bulk, name="issue-sheet-bulk"),
    path("issues/<int:number>/", issues.issue_row_detail, name="issue-row-detail"),
    path("issues/<int:number>/assign/", issues.issue_row_assign, name="issue-row-assign"),
    path("issues/<int:number>/status/", issues.issue_row_status, name="issue-row-status"),
    path("issues/<int:number>/duplicate/", issues.issue_row_duplicate, name="issue-row-duplicate"),
    path("issues/<int:number>/wont-fix/", issues.issue_row_wont_fix, name="issue-row-wont-fix"),
    path("issues/<int:number>/comment/", issues.issue_row_comment, name="issue-row-comment"),
    path(
        "issues/<int:number>/write-rule/", issues.issue_row_write_rule, name="issue-row-write-rule"
    ),
    path(
        "issues/<int:number>/add-signal/", issues.issue_row_add_signal, name="issue-row-add-signal"
    ),
    path("issues/<int:number>/fix-rule/", issues.issue_row_fix_rule, name="issue-row-fix-rule"),
    path("review/", review.review_home, name="review"),
    path("review/next/", review.review_next, name="review-next"),
    path("review/sample/make/", review.review_sample_make, name="review-sample-make"),
    path("review/sample/queue/", review.review_sample_queue, name="review-sample-queue"),
    path("review/calls/<str:external_id>/", review.review_call, name="review-call"),
    path(
        "review/calls/<str:external_id>/progress/",
        review.review_call_progress,
        name="review-call-progress",
    ),
    path("review/calls/<str:external_id>/finish/", review.review_finish, name="review-finish"),
    path("review/calls/<str:external_id>/skip/", review.review_skip, name="review-skip"),
    path("review/calls/<str:external_id>/issues/", review.review_issue, name="review-issue"),
    path(
        "review/calls/<str:external_id>/mark-rest/",
        review.review_mark_rest,
        name="review-mark-rest",
    ),
    path(
        "review/calls/<str:external_id>/unmark/",
        review.review_unmark_many,
        name="review-unmark-many",
    ),
    path(
        "review/calls/<str:external_id>/verdicts/<int:verdict_id>/mark/",
        review.review_mark,
        name="review-mark",
    ),
    path(
        "review/calls/<str:external_id>/verdicts/<int:verdict_id>/unmark/",
        review.review_unmark,
        name="review-unmark",
    ),
    path("calibration/", calibration.calibration, name="calibration"),
    path("calibration/export.<str:fmt>", calibration.calibration_export, name="calibration-export"),
    path(
        "calibration/rule-versions/<int:pk>/",
        calibration.calibration_detail,
        name="calibration-detail",
    ),
    path(
        "calibration/rule-versions/<int:pk>/verdicts/<str:cell>/",
        calibration.calibration_cell,
        name="calibration-cell",
    ),
    path(
        "calibration/rule-versions/<int:pk>/promote/",
        calibration.calibration_promote,
        name="calibration-promote",
    ),
    path(
        "calibration/rule-versions/<int:pk>/demote/",
        calibration.calibration_demote,
        name="calibration-demote",
    ),
    path("calibration/decisions/", calibration.calibration_decisions, name="calibration-decisions"),
    path(
        "calibration/disagreements/",
        calibration.calibration_disagreements,
        name="calibration-disagreements",
    ),
    path(
        "calibration/verdicts/<int:pk>/settle/",
        calibration.calibration_settle,
        name="calibration-settle",
    ),
    path("workbench/", workbench.workbench_index, name="workbench"),
    path("workbench/rules/<str:rule_id>/", workbench.workbench_rule, name="workbench-rule"),
    path(
        "workbench/rules/<str:rule_id>/drafts/",
        workbench.workbench_draft_create,
        name="workbench-draft-create",
    ),
    path("workbench/drafts/<int:pk>/", workbench.workbench_draft, name="workbench-draft"),
    path(
        "workbench/drafts/<int:pk>/progress/",
        workbench.workbench_draft_progress,
        name="workbench-draft-progress",
    ),
    path("workbench/drafts/<int:pk>/run/", workbench.workbench_draft_run, name="workbench-run"),
    path("workbench/drafts/<int:pk>/save/", workbench.workbench_draft_save, name="workbench-save"),
    path(
        "workbench/drafts/<int:pk>/meaning/",
        workbench.workbench_draft_meaning,
        name="workbench-meaning",
    ),
    path("classifiers/", classifiers.classifier_index, name="classifier-index"),
    path("classifiers/<str:rule_id>/", classifiers.classifier_detail, name="classifier-detail"),
    path(
        "classifiers/<str:rule_id>/export.<str:fmt>",
        classifiers.classifier_export,
        name="classifier-export",
    ),
    path("outcomes/", outcomes.outcomes, name="outcomes"),
    path(
        "outcomes/calls/<str:external_id>/issue/",
        outcomes.outcome_call_issue,
        name="outcome-call-issue",
    ),
    path("review/calls/<str:external_id>/outcome/", outcomes.review_outcome, name="review-outcome"),
    path("decisions/", decisions.decision_accuracy_page, name="decision-accuracy"),
    path("decisions/hard/", decisions.decision_hard_queue, name="decision-hard-queue"),
    path(
        "review/calls/<str:external_id>/decisions/<int:decision_id>/label/",
        decisions.review_decision_label,
        name="review-decision-label",
    ),
]

issue_rows = SimpleRouter()
issue_rows.register("issue-rows", IssueRowViewSet, basename="api-issue-row")

api_urlpatterns = [
    *issue_rows.urls,
    path("queue/next/", review_api.QueueNext.as_view(), name="api-queue-next"),
    path("queue/finish/", review_api.QueueFinish.as_view(), name="api-queue-finish"),
    path("queue/skip/", review_api.QueueSkip.as_view(), name="api-queue-skip"),
    path(
        "queue/mark-rest-right/",
        review_api.QueueMarkRestRight.as_view(),
        name="api-queue-mark-rest",
    ),
    path("marks/", review_api.Marks.as_view(), name="api-marks"),
    path("marks/import/", marks_import_api.MarksImport.as_view(), name="api-marks-import"),
    path("sample/", review_api.SampleToday.as_view(), name="api-sample"),
    path("samples/", review_api.Samples.as_view(), name="api-samples"),
    path("calibration/", calibration_api.CalibrationView.as_view(), name="api-calibration"),
    path(
        "rule-versions/<int:pk>/promote/",
        calibration_api.PromoteView.as_view(),
        name="api-rule-version-promote",
    ),
    path(
        "rule-versions/<int:pk>/demote/",
        calibration_api.DemoteView.as_view(),
        name="api-rule-version-demote",
    ),
    path(
        "classifier-thresholds/<str:rule_id>/",
        ClassifierThresholds.as_view(),
        name="api-classifier-thresholds",
    ),
    path("rule-drafts/", workbench_api.RuleDrafts.as_view(), name="api-rule-drafts"),
    path("rule-drafts/<int:pk>/", workbench_api.RuleDraftDetail.as_view(), name="api-rule-draft"),
    path(
        "rule-drafts/<int:pk>/estimate/",
        workbench_api.RuleDraftEstimate.as_view(),
        name="api-rule-draft-estimate",
    ),
    path(
        "rule-drafts/<int:pk>/runs/",
        workbench_api.RuleDraftRuns.as_view(),
        name="api-rule-draft-runs",
    ),
    path(
        "rule-drafts/<int:pk>/save/",
        workbench_api.RuleDraftSave.as_view(),
        name="api-rule-draft-save",
    ),
    path(
        "rule-drafts/<int:pk>/meaning/",
        workbench_api.RuleDraftMeaning.as_view(),
        name="api-rule-draft-meaning",
    ),
    path("outcomes/", outcomes_api.Outcomes.as_view(), name="api-outcomes"),
    path("outcome-ratings/", outcomes_api.OutcomeRatings.as_view(), name="api-outcome-ratings"),
    path(
        "outcome-questions/",
        outcomes_api.OutcomeQuestions.as_view(),
        name="api-outcome-questions",
    ),
    path("decision-labels/", decisions_api.DecisionLabels.as_view(), name="api-decision-labels"),
    path("decision-moments/hard/", decisions_api.HardMoments.as_view(), name="api-decision-hard"),
    path(
        "decision-accuracy/", decisions_api.DecisionAccuracy.as_view(), name="api-decision-accuracy"
    ),
]
