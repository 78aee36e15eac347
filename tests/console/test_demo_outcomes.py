"""The demo's outcome ratings: the past week rated, so the trend and the predictors show."""

import pytest

from labeling.models import OutcomeRating
from labeling.selectors.outcomes import outcome_data
from tests.console.test_demo import load

pytestmark = pytest.mark.django_db


def test_the_past_week_is_rated_and_a_second_load_changes_nothing():
    output = load()
    assert "outcomes: " in output and "2 with nothing flagged" in output
    ratings = OutcomeRating.objects.all()
    assert ratings.count() >= 30 and not ratings.filter(assignment__isnull=True).exists()
    # Every rating is by the reviewer who finished that call in a past day's sample.
    assert all(
        r.assignment.reviewer_id == r.reviewer_id and r.assignment.finished_at is not None
        for r in ratings.select_related("assignment")
    )
    data = outcome_data({"agent": "phone-screen"})
    assert {v["version"] for v in data["versions"]} == {"2026-11-21.1", "2026-11-28.1"}
    assert len(data["trend"]) >= 3 and all(r["mean_ci"] for r in data["trend"])
    bad = data["bad_unflagged"]
    assert len(bad) == 2 and all(c["issue_rows"] == 0 for c in bad)
    assert any("next" in r["reason"] for c in bad for r in c["ratings"])
    checks = {p["check"]: p for p in data["predictors"]}
    assert checks["signals.no-long-silence"]["source"] == "detector"
    # A check that fires with bad calls shows it, and some checks are worth a look.
    assert checks["signals.no-long-silence"]["difference_ci"][1] < 0
    assert any(p["worth_a_look"] and not p["never_fired"] for p in data["predictors"])
    before = sorted(ratings.values_list("transcript_id", "reviewer_id", "rating", "updated_at"))
    assert "outcome ratings already there" in load()
    after = sorted(ratings.values_list("transcript_id", "reviewer_id", "rating", "updated_at"))
    assert after == before
