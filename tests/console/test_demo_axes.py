"""The demo's trajectory axes step: two reports of the booking agent, the newer one flagged."""

import pytest

from console.demo import DEMO_STEPS
from console.demo_axes import demo_axes_load
from console.demo_data import DEMO_DIR
from evals.catalog.models import Transcript
from evals.trajectories.models import AxesReport

pytestmark = pytest.mark.django_db


def test_demo_axes_make_a_green_and_a_flagged_report_once():
    assert "trajectory axes" in [s.name for s in DEMO_STEPS]
    line = demo_axes_load(DEMO_DIR)
    assert "24 created" in line and "2026-11-24.1 green, 2026-11-29.1 flagged" in line
    old, new = AxesReport.objects.order_by("pk")
    assert new.baseline == old and not new.passed
    flagged = {c["axis"] for c in new.results["comparison"] if c["flagged"]}
    assert flagged == {"task_success", "tool_correctness"}
    assert old.results["overall"]["task_success"]["passed"] == 11  # one bag count went wrong
    # Faithfulness from the claims put in the judge's cache (no judge needed): the cancel-trip
    # replies say where the refund goes, which nothing supports.
    faithful = old.results["overall"]["faithfulness"]
    assert (faithful["n"], faithful["passed"]) == (12, 9)
    assert (faithful["supported"], faithful["total"]) == (12, 15)
    again = demo_axes_load(DEMO_DIR)
    assert "0 created, 24 unchanged" in again and "already made" in again
    assert AxesReport.objects.count() == 2 and Transcript.objects.count() == 24
