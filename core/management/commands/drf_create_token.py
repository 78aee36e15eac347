from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.models import ApiToken
from core.tokens import api_token_create, api_token_revoke

NAME = "drf_create_token"


class Command(BaseCommand):
    help = (
        "Make an API token for USER and print it as Django REST framework's command did (kept "
        "for scripts that call it; `api_token create` is the full command). Each run makes a new "
        "key: keys are stored hashed, so an old one cannot be shown again."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "-r", "--reset", action="store_true", help="revoke the tokens this command made before"
        )

    def handle(self, *args, username, reset, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"Cannot create the Token: user {username} does not exist")
        if reset:
            for token in ApiToken.objects.filter(user=user, name=NAME, revoked_at=None):
                api_token_revoke(token_id=token.pk)
        _, key = api_token_create(user=user, name=NAME, by="command")
        self.stdout.write(f"Generated token {key} for user {username}")
