"""The import page (issue 23): a file is previewed, its missing agent asked, then imported in the
background by the kind's own importer; errors come back beside their lines and nothing is
written; the same file fixed goes in."""

import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.errors import Conflict, DomainError, NotFound
from core.import_jobs import (
    IMPORT_TASK,
    import_job_progress,
    import_job_run,
    import_job_stale,
    import_job_start,
    import_job_upload,
)
from core.import_kinds import IMPORT_KINDS
from core.models import ImportJob
from evals.catalog.models import Transcript
from evals.evalruns.models import Dataset
from evals.judging.models import Verdict
from evals.rules.models import Rule
from tests.evals.import_helpers import RULES_YAML, call
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("import_dir")]


def upload(client, name: str, body: str | bytes, kind: str = "transcripts"):
    data = body.encode() if isinstance(body, str) else body
    response = client.post(
        reverse("import-list"), {"kind": kind, "file": SimpleUploadedFile(name, data)}
    )
    assert response.status_code == 302, response.content.decode()[:500]
    return ImportJob.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def start(client, job, django_capture_on_commit_callbacks, **values):
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(reverse("import-start", args=[job.pk]), values)
    assert response.status_code == 302, response.content.decode()[:500]
    assert len(queued) == 1  # the task, once the start commits
    import_job_run(job.pk)  # what the worker (or the eager thread) runs
    job.refresh_from_db()
    return job


def bare(id, **kw):
    return json.dumps(json.loads(call(id, **kw)) | {"agent": None, "agent_version": None})


def test_every_kind_the_page_offers_calls_its_command_and_its_api(client):
    assert {"transcripts", "rules", "verdicts", "dataset", "decision-kinds"} <= set(IMPORT_KINDS)
    for kind in IMPORT_KINDS.values():
        assert kind.command and reverse(kind.api)
    from django.core.management import get_commands

    assert {k.command for k in IMPORT_KINDS.values()} <= set(get_commands())


def test_a_file_without_agents_is_previewed_asked_refused_at_its_lines_then_imported(
    client, engineer, import_dir, django_capture_on_commit_callbacks
):
    client.force_login(engineer)
    lines = [
        bare("call-1"),
        bare("call-2", turns=[{"speaker": "bot", "text": "Hello there."}]),
        bare("call-3"),
    ]
    job = upload(client, "calls.jsonl", "\n".join(lines) + "\n")
    assert job.status == ImportJob.Status.UPLOADED and job.size > 0
    assert any(import_dir.rglob("calls.jsonl"))  # stored, not imported
    assert Transcript.objects.count() == 0

    page = client.get(reverse("import-detail", args=[job.pk]))
    html = page.content.decode()
    assert (
        page.context["preview"].lines[0][0] == 1 and "call-1" in page.context["preview"].lines[0][1]
    )
    assert page.context["preview"].missing == {"agent", "agent_version"}
    asked = {o["option"].name: o for o in page.context["options"] if o["asked"]}
    assert asked["agent"]["required"] and asked["agent_version"]["required"]
    assert "the first lines do not say" in html

    # Without the agent: the importer's own message, spelled for this page; nothing written.
    job = start(client, job, django_capture_on_commit_callbacks)
    assert job.status == ImportJob.Status.FAILED and Transcript.objects.count() == 0
    assert job.errors[0]["line"] == "1" and job.errors[0]["field"] == "agent"
    assert "the form's “Agent” and “Agent version” fields" in job.errors[0]["reason"]
    assert '"id": "call-1"' in job.errors[0]["text"]

    # With it: line 2's speaker is bad, and the error sits beside line 2's text.
    job = start(
        client,
        job,
        django_capture_on_commit_callbacks,
        agent="phone-screen",
        agent_version="2026-12-01.1",
    )
    assert job.status == ImportJob.Status.FAILED and Transcript.objects.count() == 0
    (error,) = job.errors
    assert (error["line"], error["field"]) == ("2", "turns[0].speaker")
    assert "'bot' is not one of agent, user, tool, system" in error["reason"]
    assert '"speaker": "bot"' in error["text"]
    html = client.get(reverse("import-detail", args=[job.pk])).content.decode()
    assert "Nothing was imported." in html and "Line 2" in html and "turns[0].speaker" in html
    errors = html[html.index('id="import-errors"') :]
    assert (
        errors.index("Line 2")
        < errors.index("&quot;speaker&quot;: &quot;bot&quot;")
        < errors.index("is not one of agent, user, tool, system")
    )
    assert job.options == {
        "agent": "phone-screen",
        "agent_version": "2026-12-01.1",
        "replace": False,
    }

    # The file fixed, uploaded again: imported, and its stored file removed.
    lines[1] = bare("call-2")
    fixed = upload(client, "calls.jsonl", "\n".join(lines) + "\n")
    stored = import_dir / fixed.file
    assert stored.exists()
    fixed = start(
        client,
        fixed,
        django_capture_on_commit_callbacks,
        agent="phone-screen",
        agent_version="2026-12-01.1",
    )
    assert fixed.status == ImportJob.Status.DONE and fixed.file == ""
    assert fixed.result["created"] == 3 and fixed.result["details"]["turns"] == 9
    assert Transcript.objects.filter(agent_version__version="2026-12-01.1").count() == 3
    assert import_job_progress(fixed)["read"] == fixed.size
    assert not stored.exists() and not stored.parent.exists()
    html = client.get(reverse("import-detail", args=[fixed.pk])).content.decode()
    assert "Imported." in html and "transcripts: 3 created" in html


def test_a_file_that_names_its_agent_is_not_asked_for_one(client, engineer):
    client.force_login(engineer)
    job = upload(client, "calls.jsonl", call("call-1") + "\n" + call("call-2"))
    page = client.get(reverse("import-detail", args=[job.pk]))
    assert page.context["preview"].missing == set()
    asked = {o["option"].name for o in page.context["options"] if o["asked"]}
    assert asked == {"replace"}  # the defaults are tucked away
    assert "the first lines do not say" not in page.content.decode()


@pytest.mark.parametrize(
    ("kind", "name", "body", "values", "check"),
    [
        ("rules", "rules.yaml", RULES_YAML, {}, lambda: Rule.objects.count() == 3),
        (
            "dataset",
            "rows.jsonl",
            '{"id": "r1", "input": "Book a table for two."}\n',
            {"name": "booking-tools"},
            lambda: Dataset.objects.get().rows_count == 1,
        ),
    ],
)
def test_rules_and_datasets_go_in_through_their_importers(
    client, engineer, django_capture_on_commit_callbacks, kind, name, body, values, check
):
    client.force_login(engineer)
    job = start(
        client, upload(client, name, body, kind=kind), django_capture_on_commit_callbacks, **values
    )
    assert job.status == ImportJob.Status.DONE, job.detail
    assert check()


def test_verdicts_report_rows_written_and_a_bad_yaml_line_is_named(
    client, engineer, django_capture_on_commit_callbacks
):
    from evals.catalog.services.importing import transcripts_import
    from evals.rules.importing import rules_import

    rules_import(text=RULES_YAML)
    transcripts_import(lines=[call("call-1")])
    client.force_login(engineer)
    verdicts = "\n".join(
        json.dumps(
            {
                "transcript": "call-1",
                "rule": "opening.greet-by-name",
                "rule_version": 1,
                "flagged": False,
                "judge": f"judge-{i}",
            }
        )
        for i in range(5)
    )
    job = start(
        client,
        upload(client, "v.jsonl", verdicts, kind="verdicts"),
        django_capture_on_commit_callbacks,
    )
    assert job.status == ImportJob.Status.DONE and Verdict.objects.count() == 5
    assert import_job_progress(job)["rows"] == 5

    broken = RULES_YAML.replace("    severity: critical\n", "    severity: awful\n")
    job = start(
        client,
        upload(client, "rules.yaml", broken, kind="rules"),
        django_capture_on_commit_callbacks,
    )
    assert job.status == ImportJob.Status.FAILED
    (error,) = job.errors
    assert error["field"] == "severity" and error["text"].strip() == "severity: awful"
    assert error["line"] == str(RULES_YAML.splitlines().index("    severity: critical") + 1)


def test_only_the_uploader_sees_a_job_and_a_running_one_is_not_started_twice(
    client, engineer, lead
):
    job = import_job_upload(
        kind="rules", upload=SimpleUploadedFile("r.yaml", RULES_YAML.encode()), actor=engineer
    )
    client.force_login(lead)
    assert client.get(reverse("import-detail", args=[job.pk])).status_code == 404
    with pytest.raises(NotFound):
        import_job_start(job_id=job.pk, actor=lead, values={})
    import_job_start(job_id=job.pk, actor=engineer, values={})
    with pytest.raises(Conflict):
        import_job_start(job_id=job.pk, actor=engineer, values={})
    reviewer = UserFactory(username="rev", roles=["reviewer"])
    with pytest.raises(DomainError, match="import_data"):
        import_job_upload(
            kind="rules", upload=SimpleUploadedFile("r.yaml", b"rules: []"), actor=reviewer
        )


def test_a_job_whose_worker_stopped_says_so_and_can_start_again(engineer):
    job = import_job_upload(
        kind="rules", upload=SimpleUploadedFile("r.yaml", RULES_YAML.encode()), actor=engineer
    )
    import_job_start(job_id=job.pk, actor=engineer, values={})
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)
    job.refresh_from_db()
    assert not import_job_stale(job)
    cache.set(f"import-job:{job.pk}:at", 0)  # last moved long ago
    assert import_job_stale(job)
    import_job_start(job_id=job.pk, actor=engineer, values={})
    assert import_job_run(job.pk) == ImportJob.Status.DONE


def test_too_large_and_unknown_uploads_are_refused_naming_the_setting(client, engineer, settings):
    client.force_login(engineer)
    settings.DOCKET_IMPORT_MAX_BYTES = 10
    big = client.post(
        reverse("import-list"),
        {"kind": "transcripts", "file": SimpleUploadedFile("c.jsonl", call("call-1").encode())},
    )
    assert big.status_code == 413 and "DOCKET_IMPORT_MAX_BYTES (10)" in big.content.decode()
    odd = client.post(
        reverse("import-list"), {"kind": "x", "file": SimpleUploadedFile("c.jsonl", b"{}")}
    )
    assert odd.status_code == 400 and "is not a kind of import" in odd.content.decode()
    assert ImportJob.objects.count() == 0


def test_the_task_is_a_registered_celery_task():
    from celery import current_app

    assert IMPORT_TASK in current_app.tasks
