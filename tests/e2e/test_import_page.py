"""An engineer imports transcripts from the Import page (issue 23): a file with a bad line and no
agent is previewed, the agent asked, the error shown beside its line and nothing imported; the
fixed file goes in. At desk and phone sizes: no serious axe issue, no console error (CSP
included), no sideways scroll."""

import json

import pytest
from playwright.sync_api import expect

from evals.catalog.models import Transcript
from tests.e2e.axe import assert_no_serious_axe
from tests.e2e.test_axes import DESK, PHONE, no_sideways_scroll

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("import_dir")]


def call_line(n: int, speaker: str = "user") -> str:
    return json.dumps(
        {
            "id": f"upload-{n}",
            "turns": [
                {"speaker": "agent", "text": f"Call {n}: tell me about your last role."},
                {"speaker": speaker, "text": "I built payment systems for four years."},
            ],
        }
    )


def upload(page, path):
    page.get_by_role("radio", name="Transcripts").check()
    page.get_by_label("File", exact=True).set_input_files(path)
    page.get_by_role("button", name="Upload and preview").click()
    expect(page.get_by_role("heading", name=path.name)).to_be_visible()


def give_the_agent_and_import(page):
    agent = page.get_by_label("Agent", exact=True)
    expect(agent).to_have_attribute("required", "")  # the file names none: asked
    agent.fill("phone-screen")
    page.get_by_label("Agent version").fill("2026-12-02.1")
    page.get_by_role("button", name="Import", exact=True).or_(
        page.get_by_role("button", name="Import again")
    ).click()


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_a_bad_line_is_shown_where_it_is_then_the_fixed_file_goes_in(
    login, engineer, live_server, tmp_path, size
):
    bad = tmp_path / "calls.jsonl"
    bad.write_text("\n".join([call_line(1), call_line(2, speaker="bot"), call_line(3)]) + "\n")
    good = tmp_path / "calls-fixed.jsonl"
    good.write_text("\n".join(call_line(n) for n in (1, 2, 3)) + "\n")
    page = login(engineer)
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.set_viewport_size(size)
    if size == PHONE:
        page.get_by_role("button", name="Menu").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Import").click()
    expect(page.get_by_role("heading", name="Import", exact=True)).to_be_visible()
    assert_no_serious_axe(page)
    no_sideways_scroll(page)

    upload(page, bad)
    preview = page.locator("#preview li")
    expect(preview).to_have_count(3)
    expect(preview.nth(1)).to_contain_text('"speaker": "bot"')
    expect(page.get_by_text("nothing is imported yet")).to_be_visible()
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
    page.screenshot(path=tmp_path / f"preview-{size['width']}.png", full_page=True)

    give_the_agent_and_import(page)
    expect(page.locator("#import-status")).to_have_text("nothing imported", timeout=30_000)
    error = page.locator("#import-errors li")
    expect(error).to_have_count(1)
    expect(error).to_contain_text("Line 2")
    expect(error).to_contain_text("turns[1].speaker")
    expect(error.locator("pre")).to_contain_text('"speaker": "bot"')  # the line, beside its error
    expect(error).to_contain_text("'bot' is not one of agent, user, tool, system")
    expect(page.locator("#preview li.imp-bad")).to_have_count(1)
    expect(page.locator("#preview li.imp-bad")).to_contain_text("upload-2")
    assert Transcript.objects.count() == 0
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
    page.screenshot(path=tmp_path / f"errors-{size['width']}.png", full_page=True)

    page.get_by_role("link", name="Import another file").click()
    upload(page, good)
    give_the_agent_and_import(page)
    expect(page.locator("#import-status")).to_have_text("imported", timeout=30_000)
    expect(page.locator("#import-result")).to_contain_text("transcripts: 3 created")
    assert set(Transcript.objects.values_list("external_id", flat=True)) == {
        "upload-1",
        "upload-2",
        "upload-3",
    }
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
    assert not problems, problems
