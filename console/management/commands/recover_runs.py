import time

from django.core.management.base import BaseCommand

from console.services import runs_recover


class Command(BaseCommand):
    help = (
        "Queue again the work of dead workers: judge, conversation, eval and gate runs whose "
        "lease expired, and webhook deliveries a restart left unsent (what Celery beat runs "
        "every DOCKET_RECOVER_INTERVAL_S). Without a broker the work runs here."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--every",
            type=int,
            default=0,
            metavar="SECONDS",
            help="sweep again every SECONDS until stopped (without a broker, beside the server)",
        )

    def handle(self, *args, every, **options):
        while True:
            done = runs_recover().as_dict()
            self.stdout.write(" ".join(f"{k}={v}" for k, v in done.items()))
            if every <= 0:
                return
            time.sleep(every)
