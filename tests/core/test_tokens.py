"""API tokens (issues 23 and 27): made on a page or by a command, shown once, stored as a digest,
last use written at most once a minute, revoked; service accounts made by leads; DRF's old keys
keep working after the migration hashes them."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.errors import DomainError, NotFound
from core.models import ApiToken, ServiceAccount
from core.tokens import (
    api_token_create,
    api_token_revoke,
    service_account_token_create,
    token_digest,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
RULES = "/api/v1/rules/"


def get(client, key, url=RULES, **extra):
    return client.get(url, HTTP_AUTHORIZATION=f"Token {key}", **extra)


def test_a_key_is_stored_only_as_its_digest_and_works_until_revoked(client, engineer):
    token, key = api_token_create(user=engineer, name="CI")
    assert key.startswith("dkt_") and len(key) > 40
    assert token.prefix == key[:12] and token.digest == token_digest(key) != key
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert key not in {str(v) for v in row.values()}

    assert get(client, key).status_code == 200
    assert get(client, key[:-1] + ("A" if key[-1] != "A" else "B")).status_code == 401

    api_token_revoke(token_id=token.pk, actor=engineer)
    refused = get(client, key)
    assert refused.status_code == 401 and refused.json()["code"] == "authentication_failed"


def test_an_inactive_users_token_is_refused(client, engineer):
    _, key = api_token_create(user=engineer, name="CI")
    engineer.is_active = False
    engineer.save()
    assert get(client, key).status_code == 401


def test_the_last_use_is_written_once_a_minute_not_on_every_request(client, engineer, settings):
    assert settings.DOCKET_API_TOKEN_TOUCH_S == 60
    token, key = api_token_create(user=engineer, name="CI")
    assert token.last_used_at is None
    with CaptureQueriesContext(connection) as first:
        assert get(client, key).status_code == 200
    token.refresh_from_db()
    used = token.last_used_at
    assert used is not None and _token_updates(first) == 1

    with CaptureQueriesContext(connection) as later:
        for _ in range(5):
            assert get(client, key).status_code == 200
    assert _token_updates(later) == 0
    token.refresh_from_db()
    assert token.last_used_at == used

    ApiToken.objects.filter(pk=token.pk).update(last_used_at=used - timedelta(seconds=61))
    with CaptureQueriesContext(connection) as after_a_minute:
        assert get(client, key).status_code == 200
    assert _token_updates(after_a_minute) == 1
    token.refresh_from_db()
    assert token.last_used_at > used - timedelta(seconds=1)


def _token_updates(ctx) -> int:
    table = ApiToken._meta.db_table
    return sum(
        1 for q in ctx.captured_queries if q["sql"].startswith("UPDATE") and table in q["sql"]
    )


def test_the_page_shows_a_new_key_once_and_only_prefixes_after(client, reviewer):
    client.force_login(reviewer)
    made = client.post(reverse("token-list"), {"name": "my laptop"})
    assert made.status_code == 201
    token = ApiToken.objects.get(user=reviewer)
    key = made.context["made"]["key"]
    page = made.content.decode()
    assert key in page and "Copy the key now: it is not shown again." in page
    assert "no-store" in made["Cache-Control"]

    later = client.get(reverse("token-list")).content.decode()
    assert key not in later and f"{token.prefix}…" in later and "my laptop" in later
    assert "never" in later  # not used yet

    assert get(client, key).status_code == 200
    blank = client.post(reverse("token-list"), {"name": "  "})
    assert blank.status_code == 400 and "give the token a name" in blank.content.decode()


def test_a_user_revokes_their_own_token_and_not_anothers(client, reviewer, engineer):
    mine, key = api_token_create(user=reviewer, name="mine")
    theirs, their_key = api_token_create(user=engineer, name="theirs")
    client.force_login(reviewer)
    assert client.post(reverse("token-revoke", args=[theirs.pk])).status_code == 404
    assert get(client, their_key).status_code == 200
    done = client.post(reverse("token-revoke", args=[mine.pk]), follow=True)
    assert "it no longer works" in done.content.decode()
    assert get(client, key).status_code == 401
    with pytest.raises(NotFound):
        api_token_revoke(token_id=theirs.pk, actor=reviewer)


def test_a_lead_makes_a_service_account_in_the_engineer_role_and_revokes_its_token(
    client, lead, engineer, reviewer
):
    client.force_login(lead)
    made = client.post(
        reverse("service-token-create"), {"username": "ci-release", "name": "release job"}
    )
    assert made.status_code == 201
    key = made.context["made"]["key"]
    account = ServiceAccount.objects.select_related("user").get()
    user = account.user
    assert user.username == "ci-release" and account.created_by == "lena"
    assert list(user.groups.values_list("name", flat=True)) == ["engineer"]
    assert not user.has_usable_password()
    body = '{"rules": []}'
    imported = client.post(
        "/api/v1/rules/import/",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {key}",
    )
    assert imported.status_code in (200, 201), imported.content  # engineer's import_data
    assert "ci-release" in client.get(reverse("token-list")).content.decode()

    # a second token for the same account; a person's account is refused
    service_account_token_create(username="ci-release", name="nightly", actor=lead)
    assert ServiceAccount.objects.count() == 1 and user.api_tokens.count() == 2
    with pytest.raises(DomainError, match="a person's account"):
        service_account_token_create(username=engineer.username, name="x", actor=lead)
    with pytest.raises(DomainError, match="manage_service_accounts"):
        service_account_token_create(username="ci-2", name="x", actor=engineer)

    token = user.api_tokens.get(name="release job")
    client.force_login(reviewer)
    assert client.post(reverse("token-revoke", args=[token.pk])).status_code == 404
    client.force_login(lead)
    assert client.post(reverse("token-revoke", args=[token.pk])).status_code == 302
    assert get(client, key).status_code == 401


def test_the_admin_shows_a_prefix_never_the_key_or_its_digest(client):
    admin = UserFactory(username="operator", is_staff=True, is_superuser=True)
    token, key = api_token_create(user=admin, name="ops")
    client.force_login(admin)
    for url in (
        reverse("admin:core_apitoken_changelist"),
        reverse("admin:core_apitoken_change", args=[token.pk]),
    ):
        page = client.get(url).content.decode()
        assert f"{token.prefix}…" in page
        assert key not in page and token.digest not in page
    assert client.get(reverse("admin:core_apitoken_add")).status_code == 403
    for model in ("serviceaccount", "importjob"):
        assert client.get(reverse(f"admin:core_{model}_changelist")).status_code == 200


def test_the_commands_make_list_and_revoke_tokens(client, engineer):
    out, err = StringIO(), StringIO()
    call_command("api_token", "create", "marco", "--name", "laptop", stdout=out, stderr=err)
    key = out.getvalue().strip()
    assert "shown once" in err.getvalue() and get(client, key).status_code == 200

    out = StringIO()
    call_command("api_token", "create", "ci", "--service-account", stdout=out, stderr=StringIO())
    assert ServiceAccount.objects.get().user.groups.get().name == "engineer"

    listing = StringIO()
    call_command("api_token", "list", "marco", stdout=listing)
    prefix = key[:12]
    assert f"{prefix}…\tmarco\tlaptop\t" in listing.getvalue() and key not in listing.getvalue()

    call_command("api_token", "revoke", prefix, stdout=StringIO())
    assert get(client, key).status_code == 401

    drf = StringIO()
    call_command("drf_create_token", "marco", stdout=drf)
    said = drf.getvalue().split()
    assert said[:2] == ["Generated", "token"] and said[3:] == ["for", "user", "marco"]
    assert get(client, said[2]).status_code == 200
    call_command("drf_create_token", "marco", "--reset", stdout=StringIO())
    assert get(client, said[2]).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_key_drf_made_before_the_migration_keeps_working(client):
    """DRF's authtoken table (key in the clear) is read, hashed into core's, then dropped."""
    executor = MigrationExecutor(connection)
    leaf = [n for n in executor.loader.graph.leaf_nodes() if n[0] == "core"]
    executor.migrate([("core", "0003_manage_webhooks_permission")])
    user = UserFactory(username="ci-old", roles=["engineer"])
    old_key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # DRF's own example key
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE {quote('authtoken_token')} (key varchar(40) PRIMARY KEY, "
            "created timestamp with time zone NOT NULL, user_id integer NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token (key, created, user_id) VALUES (%s, %s, %s)",
            [old_key, timezone.now(), user.pk],
        )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(leaf)

    assert "authtoken_token" not in connection.introspection.table_names()
    token = ApiToken.objects.get(user=user)
    assert token.prefix == old_key[:8] and token.digest == token_digest(old_key)
    assert get(client, old_key).status_code == 200
