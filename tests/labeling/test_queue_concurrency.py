"""Several reviewers claiming and marking at once
on PostgreSQL: no call held twice, no mark lost."""

import threading

import pytest
from django.db import connection
from django.utils import timezone

from labeling.models import Assignment, IssueRow, Mark
from labeling.services.issue_rows import issue_row_create
from labeling.services.marks import mark_set
from labeling.services.queue import assignment_finish, sample_claim_next
from tests.factories import DailySampleFactory, SampleItemFactory, TranscriptFactory, VerdictFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_threads(n, work):
    barrier = threading.Barrier(n)
    errors = []

    def target(i):
        try:
            barrier.wait()
            work(i)
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("reviewers,reviews_needed", [(2, 1), (5, 1), (8, 1), (8, 2)])
def test_reviewers_claiming_at_once_never_share_a_call_and_never_lose_a_mark(
    make_user, reviewers, reviews_needed
):
    sample = DailySampleFactory(day=timezone.localdate())
    items = []
    for _ in range(6):
        t = TranscriptFactory()
        for _ in range(3):
            VerdictFactory(transcript=t)
        items.append(SampleItemFactory(sample=sample, transcript=t, reviews_needed=reviews_needed))
    users = [make_user("reviewer") for _ in range(reviewers)]
    claimed: dict[int, list[int]] = {u.pk: [] for u in users}

    def review_until_empty(i):
        user = users[i]
        while True:
            a = sample_claim_next(reviewer=user)
            if a is None:
                return
            claimed[user.pk].append(a.item_id)
            for v in a.item.transcript.verdicts.all():
                mark_set(reviewer=user, verdict=v, correct=(v.pk + i) % 2 == 0)
            assignment_finish(reviewer=user, transcript=a.item.transcript)

    run_threads(reviewers, review_until_empty)

    for it in items:
        holders = list(Assignment.objects.filter(item=it).values_list("reviewer_id", flat=True))
        assert len(holders) == reviews_needed == len(set(holders)), (it.pk, holders)
        assert (
            Assignment.objects.filter(item=it, finished_at__isnull=False).count() == reviews_needed
        )
    for ids in claimed.values():
        assert len(ids) == len(set(ids))  # never the same call twice
    # Every mark made is there: 3 verdicts x reviews_needed reviewers x 6 calls.
    assert Mark.objects.count() == 6 * 3 * reviews_needed
    assert not Mark.objects.filter(assignment__isnull=True).exists()


def test_issue_row_numbers_never_collide_under_concurrency(make_user):
    t = TranscriptFactory()
    users = [make_user("reviewer") for _ in range(8)]

    def file_rows(i):
        for _ in range(5):
            issue_row_create(
                reporter=users[i], transcript=t, turn=None, what="talks over", severity="minor"
            )

    run_threads(8, file_rows)
    numbers = sorted(IssueRow.objects.values_list("number", flat=True))
    assert numbers == list(range(1, 41))
