"""A client generated from the API's own schema drives the reviewer loop (issue 10): queue next,
mark each verdict, finish, file an issue row. openapi-python-client writes the client into a
temporary folder at test time; it talks to the app in-process through httpx's WSGI transport."""

import importlib
import json
import subprocess
import sys

import httpx
import pytest
from django.utils import timezone

from labeling.models import Assignment, IssueRow, Mark
from tests.factories import (
    DailySampleFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
    api_key,
    token_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def generated(tmp_path, lead, monkeypatch):
    """Import the client openapi-python-client generates from /api/schema/."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(token_client(lead).get("/api/schema/?format=json").json()))
    out = tmp_path / "docket_client"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(schema),
            "--meta",
            "none",
            "--output-path",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0 and (out / "client.py").exists(), done.stdout + done.stderr
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0] == "docket_client"]:
        del sys.modules[name]
    return lambda name: importlib.import_module(f"docket_client.{name}")


@pytest.fixture
def sampled_call():
    t = TranscriptFactory(external_id="call-000123")
    for i, text in enumerate(["Hi Dana.", "Hi.", "Tell me about your last role and your team?"]):
        TurnFactory(transcript=t, index=i, text=text, speaker="agent" if i != 1 else "user")
    VerdictFactory(transcript=t, flagged=True, turn=2, turns=[2], severity="minor")
    VerdictFactory(transcript=t, flagged=False)
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=t)
    return t


def test_the_reviewer_loop_through_a_generated_client(
    generated, sampled_call, reviewer, settings, wsgi_app
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "docket.test"]
    client = generated("client").AuthenticatedClient(
        base_url="http://docket.test",
        token=api_key(reviewer),
        prefix="Token",
        raise_on_unexpected_status=True,
        httpx_args={"transport": httpx.WSGITransport(app=wsgi_app)},
    )
    models = generated("models")

    claimed = generated("api.queue.queue_next_create").sync(client=client)
    assert isinstance(claimed, models.ClaimedCall), claimed
    assert claimed.transcript.id == "call-000123" and len(claimed.verdicts) == 2

    for verdict in claimed.verdicts:
        mark = generated("api.marks.marks_create").sync(
            client=client, body=models.MarkIn(verdict=verdict.id, correct=not verdict.flagged)
        )
        assert isinstance(mark, models.Mark), mark

    finished = generated("api.queue.queue_finish_create").sync(
        client=client, body=models.TranscriptRef(transcript="call-000123")
    )
    assert isinstance(finished, models.Assignment), finished
    assert finished.finished_at is not None

    row = generated("api.issue_rows.issue_rows_create").sync(
        client=client,
        body=models.IssueRowCreate(
            transcript="call-000123",
            turn=2,
            what="Two questions in one turn.",
            severity=models.SeverityEnum.MAJOR,
        ),
    )
    assert isinstance(row, models.IssueRowDetail), row
    assert row.number == IssueRow.objects.get().number

    assert Mark.objects.filter(reviewer=reviewer).count() == 2
    assert Assignment.objects.get(reviewer=reviewer).finished_at is not None
    nothing_left = generated("api.queue.queue_next_create").sync_detailed(client=client)
    assert nothing_left.status_code == 204
