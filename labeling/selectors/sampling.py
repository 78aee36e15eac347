"""Reads for the daily sample: which rule versions
the judge is not yet trusted on, the day's window, how many calls each sample holds."""

from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from evals.judging.selectors.browse import day_start
from evals.rules.models import RuleVersion
from evals.rules.selectors import rule_versions_replaced
from labeling.models import DailySample, SampleItemCount
from labeling.selectors.calibration import rule_version_ids_eligible


def rule_versions_untrusted() -> QuerySet[RuleVersion]:
    """Return the rule versions whose verdicts still need
    checking: not gated, not retired, not yet eligible.

    A version is trusted once a lead has gated it, or once its marks make it eligible for the gate
    (enough marks, interval lower bounds above the floors: see labeling.selectors.calibration).
    """
    open_versions = RuleVersion.objects.exclude(
        status__in=[RuleVersion.Status.GATED, RuleVersion.Status.RETIRED]
    )
    eligible = rule_version_ids_eligible(
        rule_version_ids=list(open_versions.values_list("pk", flat=True))
    )
    return open_versions.exclude(pk__in=eligible)


def sample_window(*, day: date, hours: int | None = None) -> tuple[datetime, datetime]:
    """Return [start, end) of the calls a day's sample
    draws from: the hours before the day began."""
    hours = settings.DOCKET_SAMPLE_WINDOW_HOURS if hours is None else hours
    end = day_start(day)
    return end - timedelta(hours=hours), end


def transcripts_in_window(*, start: datetime, end: datetime) -> QuerySet[Transcript]:
    """Return the calls that started in [start, end);
    a call without a start counts from its import."""
    return (
        Transcript.objects.annotate(at=Coalesce("started_at", "imported_at"))
        .filter(at__gte=start, at__lt=end)
        .order_by("external_id")
    )


def flagged_untrusted_filter() -> Q:
    """A Transcript filter: the judge flagged (without
    error) a rule version that is not yet trusted."""
    return Q(
        verdicts__flagged=True,
        verdicts__error="",
        verdicts__rule_version__in=rule_versions_untrusted(),
    )


def daily_sample_for_day(*, day: date) -> DailySample | None:
    """Return the sample of that day with `n_items` (see samples_with_item_counts), or None."""
    return samples_with_item_counts(DailySample.objects.filter(day=day)).first()


def transcripts_versions_disagree(*, start: datetime, end: datetime) -> set[int]:
    """Return the ids of the calls in [start, end) on which an untrusted rule version and the
    version it replaces (rule_versions_replaced) disagree: one flagged and the other not, by the
    same judge, neither errored. One indexed query per untrusted version that replaces one."""
    window = transcripts_in_window(start=start, end=end).order_by().values("pk")
    out: set[int] = set()
    for new, old in rule_versions_replaced(rule_versions_untrusted()).items():
        other = Verdict.objects.filter(
            transcript=OuterRef("transcript"),
            judge=OuterRef("judge"),
            rule_version_id=old,
            error="",
        ).exclude(flagged=OuterRef("flagged"))
        out.update(
            Verdict.objects.filter(rule_version_id=new, error="", transcript__in=window)
            .filter(Exists(other))
            .values_list("transcript_id", flat=True)
        )
    return out


def samples_with_item_counts(samples: QuerySet[DailySample]) -> QuerySet[DailySample]:
    """Return `samples` each annotated with `n_items`, how many calls it holds (from the counts'
    few rows per sample, not its items)."""
    return samples.annotate(
        n_items=Coalesce(
            Subquery(
                SampleItemCount.objects.filter(sample_id=OuterRef("pk"))
                .order_by()
                .values("sample_id")
                .annotate(n=Sum("n"))
                .values("n"),
                output_field=IntegerField(),
            ),
            0,
        )
    )


def sample_item_count(sample: DailySample) -> int:
    """Return how many calls `sample` holds."""
    total = SampleItemCount.objects.filter(sample_id=sample.pk).aggregate(n=Sum("n"))["n"]
    return total or 0
