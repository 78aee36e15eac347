"""Demo step: today's review sample, drawn from the
demo's latest day of calls, plus the calls with audio."""

from datetime import datetime, time
from pathlib import Path

from django.db.models import Max
from django.utils import timezone

from evals.catalog.models import Transcript
from labeling.services.sampling import daily_sample_make, sample_item_queue_by_hand

DEMO_SAMPLE_SIZE = 12


def demo_sample_load(demo_dir: Path) -> str:
    """Draw today's sample over the demo's calls
    (idempotent) and queue the recorded calls by hand."""
    today = timezone.localdate()
    calls = Transcript.objects.exclude(scenario__startswith="golden/")
    latest = calls.aggregate(at=Max("started_at"))["at"]
    if latest is None:
        return "no demo calls to sample"
    day_start = timezone.make_aware(
        datetime.combine(today, time.min), timezone.get_current_timezone()
    )
    latest_day_start = timezone.make_aware(
        datetime.combine(timezone.localtime(latest).date(), time.min),
        timezone.get_current_timezone(),
    )
    # The demo's calls were made on fixed days: reach back to the latest of them, a day at least.
    hours = max(24, int((day_start - latest_day_start).total_seconds() // 3600))
    sample, _ = daily_sample_make(day=today, size=DEMO_SAMPLE_SIZE, window_hours=hours)
    recorded = calls.exclude(audio_url="").order_by("external_id")
    queued = sum(
        1
        for t in recorded
        if sample_item_queue_by_hand(transcript=t, added_by=None, day=today).reason == "manual"
    )
    items = sample.items.count()
    return (
        f"today's sample: {items} calls ({sample.params.get('uniform', 0)} "
        f"uniform, {sample.params.get('judge_checks', 0)} judge checks, "
        f"{queued} recorded calls queued by hand)"
    )
