"""The tau-bench airline results import as they are, and their tool calls show on the call page."""

from io import StringIO

import pytest
from django.core.management import call_command

from evals.catalog.models import Transcript
from tests.evals.import_helpers import TAU_BENCH

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not TAU_BENCH.exists(), reason="the shared tau-bench dataset is not beside the repo"
    ),
]


def test_tau_bench_command_import_and_call_page_shows_tool_calls(client, reviewer, capsys):
    call_command(
        "import_transcripts", str(TAU_BENCH), "--agent", "tau-airline", "--agent-version", "gpt-4o"
    )
    assert "transcripts: 200 created" in capsys.readouterr().out
    t = Transcript.objects.get(external_id__startswith="tau-task-0-trial-0-")
    client.force_login(reviewer)
    page = client.get(f"/calls/{t.external_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "get_user_details" in html and "mia_li_3668" in html


def test_the_same_results_import_once_under_any_name_and_over_http(tmp_path, client, engineer):
    """Ids come from the content (task, trial and a digest of the conversation), not the file
    name, so a renamed copy and the same body over HTTP are no-ops (issue 10)."""
    args = ["--agent", "tau-airline", "--agent-version", "gpt-4o"]
    call_command("import_transcripts", str(TAU_BENCH), *args)
    ids = set(Transcript.objects.values_list("external_id", flat=True))
    assert len(ids) == 200 and all(i.startswith("tau-task-") for i in ids)

    renamed = tmp_path / "airline-results-copy.json"
    renamed.write_bytes(TAU_BENCH.read_bytes())
    out = StringIO()
    call_command("import_transcripts", str(renamed), *args, stdout=out)
    assert out.getvalue().startswith("transcripts: 0 created, 200 unchanged")

    client.force_login(engineer)
    response = client.post(
        "/api/v1/transcripts/import/?agent=tau-airline&agent_version=gpt-4o",
        data=TAU_BENCH.read_bytes(),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert (response.json()["created"], response.json()["unchanged"]) == (0, 200)
    assert set(Transcript.objects.values_list("external_id", flat=True)) == ids
