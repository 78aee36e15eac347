"""The tau-bench airline results import as they are, and their tool calls show on the call page."""

import pytest
from django.core.management import call_command

from evals.models import Transcript
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
    t = Transcript.objects.get(external_id="gpt-4o-airline-task-0-trial-0")
    client.force_login(reviewer)
    page = client.get(f"/calls/{t.external_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "get_user_details" in html and "mia_li_3668" in html
