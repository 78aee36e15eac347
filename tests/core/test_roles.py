import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from core.roles import ROLE_PERMISSIONS


@pytest.mark.django_db
def test_migration_creates_each_role_with_exactly_its_permissions():
    for role, codenames in ROLE_PERMISSIONS.items():
        group = Group.objects.get(name=role)
        assert sorted(group.permissions.values_list("codename", flat=True)) == sorted(codenames)


def test_reviewer_cannot_promote_but_lead_can(reviewer, lead):
    assert reviewer.has_perm("core.review")
    assert not reviewer.has_perm("core.promote")
    assert lead.has_perm("core.promote")


def test_dashboard_needs_login(client):
    response = client.get(reverse("dashboard"))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_user_without_role_gets_403(client, make_user):
    client.force_login(make_user())
    assert client.get(reverse("dashboard")).status_code == 403


def test_reviewer_sees_dashboard(client, reviewer):
    client.force_login(reviewer)
    response = client.get(reverse("dashboard"))
    assert response.status_code == 200
    assert b"Dashboard" in response.content
    assert "Content-Security-Policy" in response.headers


def test_users_with_a_permission_through_a_role_directly_or_as_superuser(
    reviewer, engineer, lead, make_user
):
    from django.contrib.auth.models import Permission

    from core.permissions import users_with_permission

    direct = make_user(username="direct")
    direct.user_permissions.add(Permission.objects.get(codename="triage"))
    make_user(username="root", is_superuser=True)
    make_user("engineer", username="gone", is_active=False)
    triagers = list(users_with_permission("triage").values_list("username", flat=True))
    assert triagers == ["direct", "lena", "marco", "root"]
    assert list(users_with_permission("review").values_list("username", flat=True)) == [
        "lena",
        "priya",
        "root",
    ]
