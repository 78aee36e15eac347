"""Trajectories scored on the three axes (not `axes`: django-axes owns that label)."""

from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "evals.trajectories"
    label = "trajectories"
    verbose_name = "Trajectories"
