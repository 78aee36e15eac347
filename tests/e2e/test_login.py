import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_reviewer_logs_in_and_sees_the_dashboard(login, reviewer, live_server):
    page = login(reviewer)
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    expect(page.get_by_text("priya · reviewer")).to_be_visible()


def test_wrong_password_is_refused(page, live_server, reviewer):
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("priya")
    page.get_by_label("Password").fill("nope")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("do not match")
