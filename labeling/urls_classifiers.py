from django.urls import path

from . import views_classifiers as v

urlpatterns = [
    path("", v.classifier_index, name="classifier-index"),
    path("<str:rule_id>/", v.classifier_detail, name="classifier-detail"),
    path("<str:rule_id>/export.<str:fmt>", v.classifier_export, name="classifier-export"),
]
