from django.urls import path

from evals.evalruns import api, views

urlpatterns = [
    path("eval-runs/", views.eval_run_list, name="eval-run-list"),
    path("eval-runs/new/", views.eval_run_start, name="eval-run-start"),
    path("eval-runs/<int:pk>/", views.eval_run_detail, name="eval-run-detail"),
]

api_urlpatterns = [
    path("datasets/", api.DatasetList.as_view(), name="api-datasets"),
    path("datasets/import/", api.DatasetImport.as_view(), name="api-datasets-import"),
    path("eval-runs/", api.EvalRunListCreate.as_view(), name="api-eval-runs"),
    path("eval-runs/<int:pk>/", api.EvalRunDetail.as_view(), name="api-eval-run"),
]
