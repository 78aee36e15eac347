"""An agent version's scope (instructions and tools) and a call's tenant: import, API, page,
command."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from core.importing import ImportFailed
from evals.catalog.models import AgentVersion, Transcript
from evals.catalog.services.importing import transcripts_import
from tests.evals.import_helpers import call

pytestmark = pytest.mark.django_db

TOOLS = [
    {
        "name": "schedule_interview",
        "description": "Book the next interview.",
        "parameters": {"type": "object", "properties": {"slot": {"type": "string"}}},
    },
    # OpenAI's function shape is accepted and stored in Docket's.
    {"type": "function", "function": {"name": "transfer_to_recruiter", "description": "Hand off."}},
]


def lines(*records):
    return list(records)


def scoped(id="call-1", instructions="Screen candidates. Never promise a salary.", **kw):
    return call(id, agent_instructions=instructions, agent_tools=TOOLS, **kw)


def version():
    return AgentVersion.objects.get(agent__name="phone-screen", version="2026-11-28.1")


def test_a_transcript_line_sets_its_versions_scope_and_tenant():
    result = transcripts_import(lines=lines(scoped(tenant="acme")), source="calls.jsonl")
    av = version()
    assert av.instructions == "Screen candidates. Never promise a salary."
    assert [t["name"] for t in av.tools] == ["schedule_interview", "transfer_to_recruiter"]
    assert av.tools[1] == {
        "name": "transfer_to_recruiter",
        "description": "Hand off.",
        "parameters": {"type": "object", "properties": {}},
    }
    assert result.details["agent_scopes"] == 1
    assert Transcript.objects.get(external_id="call-1").tenant == "acme"
    # The same scope again (another call of the version) changes nothing.
    again = transcripts_import(lines=lines(scoped("call-2")), source="more.jsonl")
    assert again.created == 1 and again.details["agent_scopes"] == 0


def test_a_bad_tool_is_refused_naming_line_and_field_and_nothing_is_written():
    bad = json.loads(scoped("call-2"))
    bad["agent_tools"] = [TOOLS[0], {"description": "no name"}]
    bad = json.dumps(bad)
    with pytest.raises(ImportFailed) as exc:
        transcripts_import(lines=lines(call("call-1"), bad), source="calls.jsonl")
    assert exc.value.first == "calls.jsonl:2: agent_tools[1].name: missing: every tool needs a name"
    assert not Transcript.objects.exists()


@pytest.mark.parametrize("chunk", [2000, 1], ids=["one chunk", "a chunk a call"])
def test_one_version_given_two_scopes_in_one_file_is_refused(chunk, monkeypatch):
    monkeypatch.setattr("evals.catalog.services.importing.CHUNK_CALLS", chunk)
    with pytest.raises(ImportFailed) as exc:
        transcripts_import(
            lines=lines(scoped("call-1"), scoped("call-2", instructions="Other.")), source="f"
        )
    assert not Transcript.objects.exists()
    assert exc.value.first.startswith("f:2: agent_instructions: phone-screen 2026-11-28.1 is given")
    assert "at 1" in exc.value.first


def test_a_stored_scope_changes_only_with_replace():
    transcripts_import(lines=lines(scoped()), source="f")
    with pytest.raises(ImportFailed) as exc:
        transcripts_import(lines=lines(scoped("call-2", instructions="New prompt.")), source="g")
    assert "already has other instructions" in exc.value.first
    assert version().instructions.startswith("Screen candidates")
    assert not Transcript.objects.filter(external_id="call-2").exists()
    transcripts_import(
        lines=lines(scoped("call-2", instructions="New prompt.")), source="g", replace=True
    )
    assert version().instructions == "New prompt."


def test_the_api_reads_and_sets_a_scope_by_role(client, reviewer, engineer):
    transcripts_import(lines=lines(call()), source="f")
    url = "/api/v1/agents/phone-screen/versions/2026-11-28.1/"
    client.force_login(reviewer)
    body = client.get(url).json()
    assert body["instructions"] == "" and body["tools"] == [] and body["calls"] == 1
    put = {"instructions": "Screen.", "tools": TOOLS}
    assert client.put(url, put, content_type="application/json").status_code == 403
    client.force_login(engineer)
    answer = client.put(url, put, content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["tools"][0]["name"] == "schedule_interview"
    # Another scope is a conflict unless replace; a bad tool names its field.
    other = client.put(url, {"instructions": "Else."}, content_type="application/json")
    assert other.status_code == 409 and other.json()["code"] == "conflict"
    bad = client.put(
        url, {"instructions": "Else.", "tools": [{"name": 3}]}, content_type="application/json"
    )
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["field"] == "tools[0].name"
    done = client.put(
        url, {"instructions": "Else.", "replace": True}, content_type="application/json"
    )
    assert done.status_code == 200 and done.json()["instructions"] == "Else."
    assert client.get("/api/v1/agents/phone-screen/versions/nope/").status_code == 404
    listed = client.get("/api/v1/agents/").json()
    assert [(v["agent"], v["version"], v["calls"]) for v in listed["results"]] == [
        ("phone-screen", "2026-11-28.1", 1)
    ]


def test_the_version_page_shows_instructions_and_tools(client, reviewer):
    transcripts_import(lines=lines(scoped(tenant="acme")), source="f")
    client.force_login(reviewer)
    page = client.get("/agents/phone-screen/2026-11-28.1/").content.decode()
    assert "Never promise a salary." in page
    assert "schedule_interview" in page and "Book the next interview." in page
    call_page = client.get("/calls/call-1/").content.decode()
    assert 'href="/agents/phone-screen/2026-11-28.1/"' in call_page
    assert "acme" in call_page
    listing = client.get("/agents/").content.decode()
    assert "2026-11-28.1" in listing and "given" in listing
    calls = client.get("/calls/", {"tenant": "acme"}).content.decode()
    assert "call-1" in calls
    assert "call-1" not in client.get("/calls/", {"tenant": "other"}).content.decode()


def test_the_command_shows_and_sets_a_scope(tmp_path):
    transcripts_import(lines=lines(call()), source="f")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Screen candidates politely.", encoding="utf-8")
    tools = tmp_path / "tools.yaml"
    tools.write_text("- name: lookup_role\n  description: Read the posting.\n", encoding="utf-8")
    out = StringIO()
    call_command(
        "agent_scope",
        "phone-screen",
        "2026-11-28.1",
        instructions=str(prompt),
        tools=str(tools),
        stdout=out,
    )
    assert "scope set (1 tools)" in out.getvalue()
    shown = StringIO()
    call_command("agent_scope", "phone-screen", "2026-11-28.1", stdout=shown)
    assert "Screen candidates politely." in shown.getvalue()
    assert "- lookup_role: Read the posting." in shown.getvalue()
    tools.write_text("- description: nameless\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"tools\[0\]\.name: missing"):
        call_command("agent_scope", "phone-screen", "2026-11-28.1", tools=str(tools), replace=True)
