from django.urls import path

from evals.trajectories import api, views

urlpatterns = [
    path("axes/", views.axes_report_list, name="axes-report-list"),
    path("axes/<int:pk>/", views.axes_report_detail, name="axes-report-detail"),
]

api_urlpatterns = [
    path("axes-reports/", api.AxesReportListCreate.as_view(), name="api-axes-reports"),
    path("axes-reports/<int:pk>/", api.AxesReportDetail.as_view(), name="api-axes-report"),
]
