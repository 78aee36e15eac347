from django.core.management.base import BaseCommand

from console.demo_history import DEMO_PASSWORD, DEMO_USERS, demo_users_ensure


class Command(BaseCommand):
    help = (
        "Create the demo users (reviewers, engineer, lead; "
        "load_demo does it too) and print how to log in."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000/", help="Where the console is served."
        )

    def handle(self, *args, **options):
        demo_users_ensure()
        self.stdout.write("")
        self.stdout.write(f"Docket demo users (password for all: {DEMO_PASSWORD}):")
        for username, role in DEMO_USERS:
            self.stdout.write(f"  {username:<8} {role}")
        self.stdout.write(f"  {'admin':<8} operator (Django admin)")
        self.stdout.write(f"Open {options['url']} and log in.")
        self.stdout.write("")
