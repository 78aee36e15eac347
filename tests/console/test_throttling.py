"""Abuse (issue 10): login lockout (django-axes) and API throttles, limits from settings."""

import pytest
from django.urls import reverse

from tests.factories import PASSWORD, api_key

pytestmark = pytest.mark.django_db


def log_in(client, username, password, address="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_thirty_wrong_passwords_then_the_right_one_does_not_log_in(client, reviewer):
    answers = [log_in(client, "priya", "wrong").status_code for _ in range(30)]
    # The form says "do not match" (200) until the limit, then the lockout page (429).
    assert answers[:9] == [200] * 9 and set(answers[10:]) == {429}

    right = log_in(client, "priya", PASSWORD)
    assert right.status_code == 429
    page = right.content.decode()
    assert "locked from this address after 10 failed logins" in page
    assert "Try again in 15 minutes" in page
    assert client.get(reverse("dashboard")).status_code == 302  # still not logged in

    # The lock is on this username from this address: the same person elsewhere is not locked out.
    elsewhere = log_in(client, "priya", PASSWORD, address="10.0.0.2")
    assert elsewhere.status_code == 302 and client.get(reverse("dashboard")).status_code == 200


def test_the_login_limit_is_a_setting(client, reviewer, settings):
    settings.AXES_FAILURE_LIMIT = 3
    assert [log_in(client, "priya", "wrong").status_code for _ in range(3)] == [200, 200, 429]


def test_thirty_bad_tokens_get_a_429_that_names_the_limit(client, engineer):
    answers = [client.get("/api/v1/rules/", HTTP_AUTHORIZATION=f"Token bad-{i}") for i in range(30)]
    codes = [r.status_code for r in answers]
    assert codes[:10] == [401] * 10 and set(codes[10:]) == {429}
    refused = answers[-1]
    assert refused.json()["detail"].startswith(
        "Too many requests with a bad token from this address (DOCKET_API_BAD_TOKEN_RATE: 10/min); "
        "try again in "
    )
    assert 0 < int(refused["Retry-After"]) <= 60

    # While it lasts even a good token from that address waits; another address is served.
    good = api_key(engineer)
    assert client.get("/api/v1/rules/", HTTP_AUTHORIZATION=f"Token {good}").status_code == 429
    other = client.get("/api/v1/rules/", HTTP_AUTHORIZATION=f"Token {good}", REMOTE_ADDR="10.9.9.9")
    assert other.status_code == 200


def test_anonymous_requests_are_throttled_per_address(client, settings):
    settings.DOCKET_API_ANON_RATE = "5/min"
    codes = [client.get("/api/v1/rules/").status_code for _ in range(7)]
    assert codes[:5] in ([401] * 5, [403] * 5) and codes[5:] == [429, 429]
    detail = client.get("/api/v1/rules/").json()["detail"]
    assert "requests without credentials from this address (DOCKET_API_ANON_RATE: 5/min)" in detail


def test_logged_in_users_get_a_generous_rate_of_their_own(client, engineer, settings):
    assert settings.DOCKET_API_USER_RATE == "3000/min"
    settings.DOCKET_API_USER_RATE = "3/min"
    token = api_key(engineer)
    codes = [
        client.get("/api/v1/rules/", HTTP_AUTHORIZATION=f"Token {token}").status_code
        for _ in range(4)
    ]
    assert codes == [200, 200, 200, 429]
    client.force_login(engineer)
    refused = client.get("/api/v1/rules/")  # the same user by session: the same count
    assert refused.status_code == 429
    assert "requests from this user (DOCKET_API_USER_RATE: 3/min)" in refused.json()["detail"]
