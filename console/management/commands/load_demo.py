from django.core.management.base import BaseCommand, CommandError

from console.demo import demo_load
from console.demo_data import DEMO_DIR
from core.importing import ImportFailed


class Command(BaseCommand):
    help = (
        "Load the demo data in demo/ (rules, calls, verdicts, "
        "and the steps other areas add). Safe to run twice."
    )

    def handle(self, *args, **options):
        if not (DEMO_DIR / "calls.jsonl").exists():
            raise CommandError(f"{DEMO_DIR}/calls.jsonl is missing: run `python demo/generate.py`")
        try:
            counts = demo_load(echo=self.stdout.write)
        except ImportFailed as exc:
            raise CommandError(f"demo data did not load: {exc}") from None
        self.stdout.write(
            f"Demo loaded: {counts['calls']} calls ({counts['calls_with_audio']} "
            f"with audio), {counts['rules']} rules ({counts['safety_rules']} "
            f"safety), {counts['verdicts']} verdicts."
        )
