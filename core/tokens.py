"""API tokens: made by their user (or by a lead for a service account), shown once, stored as
their SHA-256, revoked on a page or by a command. One home for who may do what with a token."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core.errors import DomainError, NotFound
from core.models import ApiToken, ServiceAccount
from core.permissions import user_can
from core.roles import ENGINEER, role_group

KEY_START = "dkt_"  # so a key is recognisable where it leaks (logs, a pasted script)
SHOWN = len(KEY_START) + 8  # the characters of a key kept as its prefix
NAME_MAX = 100
SERVICE_ROLE = ENGINEER


def token_digest(key: str) -> str:
    """Return the stored form of a key: its SHA-256, hex."""
    return hashlib.sha256(key.encode()).hexdigest()


def token_prefix(key: str) -> str:
    """Return the start of a key that names it on pages (keys from before hashing: 8 characters)."""
    return key[:SHOWN] if key.startswith(KEY_START) else key[:8]


def _name_clean(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise DomainError("give the token a name (what uses it: CI, a laptop, ...)", field="name")
    if len(name) > NAME_MAX:
        raise DomainError(f"at most {NAME_MAX} characters", field="name")
    return name


def api_token_create(*, user, name: str, by: str = "") -> tuple[ApiToken, str]:
    """Make a token for `user`; return it and its key, which is never stored or shown again."""
    name = _name_clean(name)
    if not user.is_active:
        raise DomainError(f"{user} is not active", field="user")
    key = KEY_START + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=token_prefix(key),
        digest=token_digest(key),
        created_by=by or user.get_username(),
    )
    return token, key


def api_token_authenticate(key: str) -> ApiToken | None:
    """Return the active token of an active user that `key` is, or None. Its last use is written
    at most once every DOCKET_API_TOKEN_TOUCH_S seconds, so a busy client costs one read."""
    if not key:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(key), revoked_at=None)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    every = timedelta(seconds=settings.DOCKET_API_TOKEN_TOUCH_S)
    if token.last_used_at is None or now - token.last_used_at >= every:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def api_token_may_manage(actor, token: ApiToken) -> bool:
    """Whether `actor` may revoke `token`: their own, or a service account's for those who hold
    manage_service_accounts; None (an operator at the command line) may revoke any."""
    if actor is None or token.user_id == actor.pk:
        return True
    is_service = ServiceAccount.objects.filter(user_id=token.user_id).exists()
    return is_service and user_can(actor, "manage_service_accounts")


def api_token_revoke(*, token_id: int, actor=None) -> ApiToken:
    """Revoke a token `actor` may manage (requests with it fail from now on); a token they may
    not manage is not found, so its existence is not told. `actor` None: the command line."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().select_related("user").filter(pk=token_id)
        token = token.first()
        if token is None or not api_token_may_manage(actor, token):
            raise NotFound("No such token.")
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
    return token


def service_account_token_create(*, username: str, name: str, actor=None) -> tuple[ApiToken, str]:
    """Make a token for service account `username` (made, in the engineer role, when new); only
    for those who hold manage_service_accounts (`actor` None: the command line). A person's
    account is refused."""
    if actor is not None and not user_can(actor, "manage_service_accounts"):
        raise DomainError("Needs permission: manage_service_accounts.")
    username = (username or "").strip()
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise DomainError(
            "letters, digits and @ . + - _ only (e.g. ci-release)", field="username"
        ) from None
    if not username or len(username) > 150:
        raise DomainError("1 to 150 characters", field="username")
    name = _name_clean(name)
    by = actor.get_username() if actor is not None else "command"
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User(username=username, is_active=True)
            user.set_unusable_password()
            user.save()
            user.groups.add(role_group(SERVICE_ROLE))
            ServiceAccount.objects.create(user=user, created_by=by)
        elif not ServiceAccount.objects.filter(user=user).exists():
            raise DomainError(
                f"{username} is a person's account: people make their own tokens",
                field="username",
            )
        return api_token_create(user=user, name=name, by=by)


def api_tokens_of(user) -> QuerySet[ApiToken]:
    """Return a user's tokens, newest first, revoked ones included."""
    return ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at", "-pk")


def service_accounts_listed() -> list[ServiceAccount]:
    """Return the service accounts with their tokens (`tokens`), by name."""
    accounts = list(ServiceAccount.objects.select_related("user").order_by("user__username"))
    tokens: dict[int, list[ApiToken]] = {a.user_id: [] for a in accounts}
    for t in ApiToken.objects.filter(user_id__in=list(tokens)).order_by("revoked_at", "-pk"):
        tokens[t.user_id].append(t)
    for a in accounts:
        a.tokens = tokens[a.user_id]
    return accounts
