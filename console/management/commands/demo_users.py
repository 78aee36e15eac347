from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

DEMO_USERS = [
    ("priya", "reviewer"),
    ("marco", "engineer"),
    ("lena", "lead"),
]
DEMO_PASSWORD = "docket-demo"


class Command(BaseCommand):
    help = "Create the three demo users (reviewer, engineer, lead) and print how to log in."

    def handle(self, *args, **options):
        User = get_user_model()
        for username, role in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save(update_fields=["password"])
            user.groups.add(Group.objects.get(name=role))
        admin, created = User.objects.get_or_create(username="admin", defaults={"is_staff": True, "is_superuser": True})
        if created:
            admin.set_password(DEMO_PASSWORD)
            admin.save(update_fields=["password"])
        self.stdout.write("")
        self.stdout.write("Docket demo users (password for all: %s):" % DEMO_PASSWORD)
        for username, role in DEMO_USERS:
            self.stdout.write(f"  {username:<8} {role}")
        self.stdout.write(f"  {'admin':<8} operator (Django admin)")
        self.stdout.write("Open http://127.0.0.1:8000/ and log in.")
        self.stdout.write("")
