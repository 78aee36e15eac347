from django.urls import path

from . import decisions as v

urlpatterns = [
    path("decision-labels/", v.DecisionLabels.as_view(), name="api-decision-labels"),
    path("decision-moments/hard/", v.HardMoments.as_view(), name="api-decision-hard"),
    path("decision-accuracy/", v.DecisionAccuracy.as_view(), name="api-decision-accuracy"),
]
