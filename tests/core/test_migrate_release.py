"""A database of the last release before the evals split migrates to today's schema, every row kept.

tests/core/fixtures/release-2026-12-01-demo.sql.gz is `pg_dump --no-owner --no-privileges` of a
PostgreSQL database made by that release (commit d60c665: `migrate`, `load_demo`, `demo_users`):
its tables, rows and `django_migrations` as a deployed console has them. The test restores it into
a scratch database, runs today's `migrate` there, and checks that no table lost a row and that
today's models read every row through their new apps.
"""

import gzip
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

pytestmark = pytest.mark.postgres

ROOT = Path(settings.BASE_DIR)
DUMP = Path(__file__).with_name("fixtures") / "release-2026-12-01-demo.sql.gz"
# (model label, table) for the judged material's models, which moved from `evals` to its apps
MOVED = {
    "catalog.Transcript": "evals_transcript",
    "catalog.Turn": "evals_turn",
    "catalog.AgentVersion": "evals_agentversion",
    "rules.RuleVersion": "evals_ruleversion",
    "judging.Verdict": "evals_verdict",
    "judging.Judge": "evals_judge",
    "gating.GateRun": "evals_gaterun",
    "gating.GoldenSetMember": "evals_goldensetmember",
    "conversation.ConversationScore": "evals_conversationscore",
    "classifiers.VerdictCategory": "evals_verdictcategory",
    "decisions.Decision": "evals_decision",
    "evalruns.EvalRunRow": "evals_evalrunrow",
    "trajectories.AxesReport": "evals_axesreport",
    "webhooks.Webhook": "evals_webhook",
}
# tables whose rows a migration moved into another table (old: new)
REPLACED = {"authtoken_token": "core_apitoken"}
READ_BACK = """
import json
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from labeling.models import Mark
moved = json.loads({moved!r})
out = {{"models": {{label: apps.get_model(label).objects.count() for label in moved}}}}
out["marks_joined"] = Mark.objects.select_related(
    "verdict__transcript__agent_version__agent", "verdict__rule_version__rule", "verdict__judge"
).count()
out["gate_run_versions"] = sum(
    r.rule_versions.count() for r in apps.get_model("gating.GateRun").objects.all()
)
out["content_types_left_in_evals"] = ContentType.objects.filter(app_label="evals").count()
out["verdict_content_type"] = ContentType.objects.get_for_model(
    apps.get_model("judging.Verdict")
).app_label
print(json.dumps(out))
"""


def _dsn(name: str) -> str:
    db = settings.DATABASES["default"]
    return (
        f"postgresql://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{name}"
    )


def _counts(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def _manage(dsn: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DOCKET_TEST_DB_NAME"}
    env.update(DATABASE_URL=dsn, DJANGO_DEBUG="1", DOCKET_LOG_LEVEL="WARNING")
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def release_db():
    """A scratch database holding the last release's demo, dropped afterwards."""
    name = f"docket_release_{uuid.uuid4().hex[:10]}"
    admin = _dsn("postgres")  # the maintenance database: CREATE DATABASE runs outside any other
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    dsn = _dsn(name)
    try:
        restored = subprocess.run(
            ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn],
            input=gzip.decompress(DUMP.read_bytes()),
            capture_output=True,
            timeout=300,
            check=False,
        )
        assert restored.returncode == 0, restored.stderr.decode()[-2000:]
        yield dsn
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_last_release_migrates_and_every_row_is_found(release_db):
    before = _counts(release_db)
    assert before["evals_verdict"] == 2464 and before["labeling_mark"] > 0  # the demo, as shipped

    done = _manage(release_db, "migrate", "--noinput")
    assert done.returncode == 0, done.stderr[-3000:]

    after = _counts(release_db)
    # No table dropped, but DRF's API keys (in the clear), which move in as digests (core.0004).
    for old, new in REPLACED.items():
        assert old not in after and after[new] == before[old]
    assert set(before) - set(REPLACED) <= set(after), set(before) - set(after)
    kept = [t for t in before if t not in REPLACED]
    lost = {t: (before[t], after[t]) for t in kept if after[t] < before[t]}
    assert lost == {}, lost
    # Only the framework's own catalogue grows: the content types and permissions of models added
    # since the release, and the roles' grants of those permissions.
    grown = {t for t in kept if after[t] > before[t]}
    assert grown <= {
        "django_migrations",
        "django_content_type",
        "auth_permission",
        "auth_group_permissions",
    }, grown
    assert after["django_migrations"] > before["django_migrations"]

    import json

    read = _manage(release_db, "shell", "-v0", "-c", READ_BACK.format(moved=json.dumps(MOVED)))
    assert read.returncode == 0, read.stderr[-3000:]
    seen = json.loads(read.stdout.strip().splitlines()[-1])
    assert seen["models"] == {label: before[table] for label, table in MOVED.items()}
    assert seen["marks_joined"] == before["labeling_mark"]
    assert seen["gate_run_versions"] == before["evals_gaterun_rule_versions"]
    # The content types followed their models (permissions and admin history stay attached).
    assert seen["content_types_left_in_evals"] == 0
    assert seen["verdict_content_type"] == "judging"

    clean = _manage(release_db, "makemigrations", "--check", "--dry-run")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    again = _manage(release_db, "migrate", "--noinput", "--check")
    assert again.returncode == 0, again.stdout + again.stderr  # nothing left to apply
