"""Sample item counts (the samples list's figures) stay equal to a count of each sample's items
after the draw, a call queued by hand, and items deleted with their call or their sample (in
either order), and `sample_item_counts_rebuild --check` catches a count that drifted."""

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from labeling.models import DailySample, SampleItem, SampleItemCount
from labeling.selectors.sampling import sample_item_count, samples_with_item_counts
from labeling.services.sample_counts import (
    SAMPLE_ITEM_COUNTS,
    sample_item_counts_differences,
)
from labeling.services.sampling import daily_sample_make, sample_item_queue_by_hand
from tests.factories import TranscriptFactory

pytestmark = pytest.mark.django_db
DAY = date(2026, 11, 29)


def recount() -> Counter:
    """Each sample's items counted one by one: the reference the counts must equal."""
    return +Counter(SampleItem.objects.values_list("sample_id", flat=True))


def counts() -> Counter:
    out: Counter = Counter()
    for row in SampleItemCount.objects.all():
        out[row.sample_id] += row.n
    return +out


def assert_exact():
    assert counts() == recount()
    assert sample_item_counts_differences() == 0
    listed = {s.pk: s.n_items for s in samples_with_item_counts(DailySample.objects.all())}
    assert listed == {s.pk: s.items.count() for s in DailySample.objects.all()}
    for sample in DailySample.objects.all():
        assert sample_item_count(sample) == sample.items.count()


def _draw(settings) -> tuple[DailySample, list]:
    settings.DOCKET_SAMPLE_SIZE = 10
    calls = [
        TranscriptFactory(
            external_id=f"call-{i:03d}",
            started_at=datetime(2026, 11, 29, tzinfo=UTC) - timedelta(hours=1 + i % 20),
        )
        for i in range(30)
    ]
    sample, _ = daily_sample_make(day=DAY)
    return sample, calls


@pytest.fixture
def drawn(settings):
    return _draw(settings)


def test_the_draw_is_counted(drawn):
    sample, _ = drawn
    assert sample_item_count(sample) == 10
    assert_exact()


def test_a_call_queued_by_hand_is_counted_once(drawn, lead):
    sample, calls = drawn
    outside = next(c for c in calls if not sample.items.filter(transcript=c).exists())
    sample_item_queue_by_hand(transcript=outside, added_by=lead, day=DAY)
    sample_item_queue_by_hand(transcript=outside, added_by=lead, day=DAY)  # already queued
    assert sample_item_count(sample) == 11
    other = sample_item_queue_by_hand(transcript=outside, added_by=lead, day=DAY.replace(day=30))
    assert sample_item_count(other.sample) == 1
    assert_exact()


def test_items_deleted_with_their_call_leave_the_count(drawn):
    sample, _ = drawn
    sample.items.order_by("pk").first().transcript.delete()
    assert sample_item_count(sample) == 9
    assert_exact()


def test_a_deleted_sample_leaves_no_count_in_either_order(drawn, lead):
    sample, calls = drawn
    sample.delete()  # Django deletes the items first
    assert_exact()
    assert counts() == Counter()
    # The sample first, its items after (the foreign key is checked at commit).
    item = sample_item_queue_by_hand(transcript=calls[0], added_by=lead, day=DAY)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM labeling_dailysample WHERE id = %s", [item.sample_id])
        cursor.execute("DELETE FROM labeling_sampleitem WHERE sample_id = %s", [item.sample_id])
    assert_exact()
    SAMPLE_ITEM_COUNTS.fold()
    assert not SampleItemCount.objects.exists()  # sums of 0 are dropped


def test_an_item_moved_to_another_sample_moves_its_count(drawn):
    sample, _ = drawn
    other = DailySample.objects.create(day=DAY.replace(day=30), size=1)
    SampleItem.objects.filter(pk=sample.items.order_by("pk").first().pk).update(sample=other)
    assert (sample_item_count(sample), sample_item_count(other)) == (9, 1)
    assert_exact()


def test_the_writers_fold_after_commit(settings, lead, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        sample, calls = _draw(settings)
        outside = next(c for c in calls if not sample.items.filter(transcript=c).exists())
        sample_item_queue_by_hand(transcript=outside, added_by=lead, day=DAY)
    assert [f for f in callbacks if f is SAMPLE_ITEM_COUNTS.fold_default] == [
        SAMPLE_ITEM_COUNTS.fold_default
    ]  # once however many writes asked for it
    assert list(SampleItemCount.objects.values_list("sample_id", "n")) == [(sample.pk, 11)]


def test_check_catches_a_tampered_count_and_rebuild_mends_it(drawn):
    sample, _ = drawn
    out = StringIO()
    call_command("sample_item_counts_rebuild", "--check", stdout=out)
    assert "0 sample counts differ" in out.getvalue()
    SampleItemCount.objects.create(sample_id=sample.pk, n=1)
    with pytest.raises(SystemExit) as exit_:
        call_command("sample_item_counts_rebuild", "--check", stdout=(out := StringIO()))
    assert exit_.value.code == 1 and "1 sample counts differ" in out.getvalue()
    call_command("sample_item_counts_rebuild", stdout=StringIO())
    assert_exact()
    assert SampleItemCount.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_counts_survive_a_flush_and_hold_outside_a_test_transaction(settings, lead):
    """Committed writes fold for real; the flush after this test empties the tables whatever
    order it takes them in."""
    settings.DOCKET_SAMPLE_SIZE = 3
    for i in range(5):
        TranscriptFactory(started_at=datetime(2026, 11, 28, 23, tzinfo=UTC) - timedelta(hours=i))
    daily_sample_make(day=DAY)
    assert list(SampleItemCount.objects.values_list("n", flat=True)) == [3]
    assert_exact()
