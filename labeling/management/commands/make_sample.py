from datetime import date

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from labeling.services.sampling import daily_sample_make


class Command(BaseCommand):
    help = (
        "Draw the daily review sample for a day (today by "
        "default). Drawing a day twice changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--date", help="The day, YYYY-MM-DD (default: today).")
        parser.add_argument(
            "--size", type=int, help="How many calls (default: DOCKET_SAMPLE_SIZE)."
        )

    def handle(self, *args, date=None, size=None, **options):
        try:
            day = _parse_day(date) if date else timezone.localdate()
            sample, _ = daily_sample_make(day=day, size=size)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        p = sample.params
        counts = {r: 0 for r in ("uniform", "judge_check", "manual")}
        for reason in sample.items.values_list("reason", flat=True):
            counts[reason] += 1
        self.stdout.write(
            f"sample {sample.day}: {sum(counts.values())} calls "
            f"({counts['uniform']} uniform, {counts['judge_check']} judge checks, "
            f"{counts['manual']} by hand) from {p.get('population', 0)} calls in "
            f"the window, {p.get('flagged_untrusted', 0)} flagged on untrusted rules, "
            f"{p.get('versions_disagree', 0)} where a new version and the one it replaces disagree"
        )


def _parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--date: expected YYYY-MM-DD, got {text!r}") from None
