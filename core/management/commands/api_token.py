from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from core.models import ApiToken
from core.tokens import (
    api_token_create,
    api_token_revoke,
    api_tokens_of,
    service_account_token_create,
)


class Command(BaseCommand):
    help = (
        "Make, list and revoke API tokens. `create USER` prints the new key on stdout (it is "
        "shown once: only its digest is kept); `--service-account` makes the account, in the "
        "engineer role, when it is new."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="make a token and print its key")
        create.add_argument("username")
        create.add_argument("--name", default="command line", help="what uses it (CI, a laptop)")
        create.add_argument(
            "--service-account",
            action="store_true",
            help="the user is a program's account (made in the engineer role if new)",
        )
        listing = sub.add_parser("list", help="list tokens (prefix, name, last use)")
        listing.add_argument("username", nargs="?")
        revoke = sub.add_parser("revoke", help="revoke a token by the prefix pages show")
        revoke.add_argument("prefix")

    def handle(self, *args, action, **options):
        return getattr(self, f"_{action}")(**options)

    def _user(self, username: str):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        return user

    def _create(self, *, username, name, service_account, **_):
        try:
            if service_account:
                token, key = service_account_token_create(username=username, name=name)
            else:
                token, key = api_token_create(user=self._user(username), name=name, by="command")
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(
            f"Made token {token.prefix}… ({token.name}) for {token.user}; the key below is "
            "shown once."
        )
        self.stdout.write(key)

    def _list(self, *, username, **_):
        tokens = (
            api_tokens_of(self._user(username))
            if username
            else ApiToken.objects.select_related("user").order_by("user__username", "-pk")
        )
        for t in tokens:
            used = f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never used"
            state = f"revoked {t.revoked_at:%Y-%m-%d}" if t.revoked_at else "active"
            self.stdout.write(f"{t.prefix}…\t{t.user}\t{t.name}\t{used}\t{state}")

    def _revoke(self, *, prefix, **_):
        found = list(ApiToken.objects.filter(prefix=prefix.rstrip("…."), revoked_at=None)[:2])
        if len(found) != 1:
            raise CommandError(
                f"{len(found) or 'no'} active tokens start {prefix!r}: give the prefix `list` shows"
            )
        token = api_token_revoke(token_id=found[0].pk)
        self.stdout.write(f"Revoked {token}.")
