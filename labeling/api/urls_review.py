from django.urls import path

from . import marks_import
from . import review as v

urlpatterns = [
    path("queue/next/", v.QueueNext.as_view(), name="api-queue-next"),
    path("queue/finish/", v.QueueFinish.as_view(), name="api-queue-finish"),
    path("queue/skip/", v.QueueSkip.as_view(), name="api-queue-skip"),
    path("queue/mark-rest-right/", v.QueueMarkRestRight.as_view(), name="api-queue-mark-rest"),
    path("marks/", v.Marks.as_view(), name="api-marks"),
    path("marks/import/", marks_import.MarksImport.as_view(), name="api-marks-import"),
    path("sample/", v.SampleToday.as_view(), name="api-sample"),
    path("samples/", v.Samples.as_view(), name="api-samples"),
]
