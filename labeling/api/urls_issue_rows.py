from rest_framework.routers import SimpleRouter

from .issue_rows import IssueRowViewSet

router = SimpleRouter()
router.register("issue-rows", IssueRowViewSet, basename="api-issue-row")

urlpatterns = router.urls
