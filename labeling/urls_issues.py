from django.urls import path

from . import views_issues as v

urlpatterns = [
    path("issues/", v.issue_sheet, name="issue-sheet"),
    path("issues/export.csv", v.issue_sheet_export, name="issue-sheet-export"),
    path("issues/trends/", v.issue_trends, name="issue-trends"),
    path("issues/bulk/", v.issue_sheet_bulk, name="issue-sheet-bulk"),
    path("issues/<int:number>/", v.issue_row_detail, name="issue-row-detail"),
    path("issues/<int:number>/assign/", v.issue_row_assign, name="issue-row-assign"),
    path("issues/<int:number>/status/", v.issue_row_status, name="issue-row-status"),
    path("issues/<int:number>/duplicate/", v.issue_row_duplicate, name="issue-row-duplicate"),
    path("issues/<int:number>/wont-fix/", v.issue_row_wont_fix, name="issue-row-wont-fix"),
    path("issues/<int:number>/comment/", v.issue_row_comment, name="issue-row-comment"),
    path("issues/<int:number>/write-rule/", v.issue_row_write_rule, name="issue-row-write-rule"),
    path("issues/<int:number>/add-signal/", v.issue_row_add_signal, name="issue-row-add-signal"),
    path("issues/<int:number>/fix-rule/", v.issue_row_fix_rule, name="issue-row-fix-rule"),
]
