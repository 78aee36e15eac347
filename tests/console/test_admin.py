import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from tests.factories import UserFactory

# Docket's apps with models: labeling and the apps under evals/.
DOCKET_APPS = [
    c.label for c in apps.get_app_configs() if c.name.startswith("evals.") or c.name == "labeling"
]


def _inline_models():
    return {
        inline.model
        for model_admin in admin.site._registry.values()
        for inline in model_admin.inlines
    }


def test_every_model_is_in_the_admin_for_operators():
    reachable = set(admin.site._registry) | _inline_models()
    missing = [
        m.__name__
        for app in DOCKET_APPS
        for m in apps.get_app_config(app).get_models()
        if m not in reachable
    ]
    assert missing == []
    assert len(DOCKET_APPS) == 13  # the twelve evals apps and labeling: none left out of the check


@pytest.mark.django_db
def test_each_changelist_renders_for_a_superuser(client):
    client.force_login(UserFactory(username="operator", is_staff=True, is_superuser=True))
    for model in admin.site._registry:
        if model._meta.app_label not in DOCKET_APPS:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_a_lead_without_staff_status_is_kept_out_of_the_admin(client, lead):
    client.force_login(lead)
    response = client.get(reverse("admin:judging_verdict_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
