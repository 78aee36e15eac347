import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.db import connection
from hypothesis import settings as hypothesis_settings

# No timed assertions: Hypothesis's per-example deadline fails tests on a busy machine (2 shared
# cores), so it is off; speed is measured in bench/.
hypothesis_settings.register_profile("docket", deadline=None)
hypothesis_settings.load_profile("docket")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite, the test database is a file (in memory where the machine has /dev/shm), not
    SQLite's shared-cache memory database: there, a thread's write locks a whole table and the
    other thread fails at once ("database table is locked"), while a file in WAL mode waits for
    the lock within the connection's timeout, as the server's own database does."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.sqlite3" and not db.get("TEST", {}).get("NAME"):
        shm = Path("/dev/shm")
        folder = (
            Path(tempfile.mkdtemp(prefix="docket-test-", dir=shm))
            if shm.is_dir() and os.access(shm, os.W_OK)
            else tmp_path_factory.mktemp("db")
        )
        db.setdefault("TEST", {})["NAME"] = str(folder / "test.sqlite3")
        yield
        shutil.rmtree(folder, ignore_errors=True)
    else:
        yield


@pytest.fixture(scope="session", autouse=True)
def _sqlite_flush_without_triggers():
    """On SQLite, a transactional test's flush deletes every table in no fixed order (a set of
    names), and the triggers that keep the precomputed figures would append rows while it does:
    into a table already emptied (a leak into the next test) or naming a parent already gone (a
    foreign key failure at commit). The flush drops them first; the post_migrate signal the flush
    sends puts them back, as after a migrate. PostgreSQL flushes with TRUNCATE, which fires none."""
    if connection.vendor != "sqlite":
        yield
        return
    # The class is taken from the open connection: importing SQLite's backend module on its own,
    # before its package has loaded, is a circular import.
    ops_class = type(connection.ops)
    flush = ops_class.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        with self.connection.cursor() as cursor:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            drops = [f'DROP TRIGGER IF EXISTS "{name}"' for (name,) in cursor.fetchall()]
        flush(self, [*drops, *sql_list])

    ops_class.execute_sql_flush = execute_sql_flush
    yield
    ops_class.execute_sql_flush = flush


def pytest_collection_modifyitems(config, items):
    """Tests marked `postgres` need a real PostgreSQL: fail on CI without one, skip elsewhere."""
    for item in items:
        if item.get_closest_marker("postgres") and connection.vendor != "postgresql":
            if os.environ.get("CI"):
                item.add_marker(
                    pytest.mark.xfail(
                        reason="CI must run this on PostgreSQL", strict=True, run=False
                    )
                )
            else:
                item.add_marker(
                    pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://...")
                )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """On CI a skipped test is a failure: CI has every service and dataset the suite needs."""
    report = yield
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped on CI, where nothing may be skipped: {reason}"
    return report


@pytest.fixture
def make_user(db):
    """Return a factory for users holding the given roles."""
    from tests.factories import UserFactory

    def make(*roles, **kwargs):
        return UserFactory(roles=roles, **kwargs)

    return make


@pytest.fixture
def reviewer(make_user):
    return make_user("reviewer", username="priya")


@pytest.fixture
def engineer(make_user):
    return make_user("engineer", username="marco")


@pytest.fixture
def lead(make_user):
    return make_user("lead", username="lena")


@pytest.fixture
def fake_judge(settings):
    """Start the fake judge server (tests/evals/judge_server.py)
    and point the judge settings at it."""
    from tests.evals.judge_server import FakeJudge

    server = FakeJudge().start()
    settings.JUDGE_BASE_URL = server.base_url
    settings.JUDGE_MODEL = "gpt-4o-mini"
    settings.JUDGE_API_KEY = "test-key"
    settings.JUDGE_TIMEOUT_S = 5
    settings.JUDGE_MAX_RETRIES = 0
    settings.JUDGE_COST_CAP_USD = 0
    yield server
    server.stop()


@pytest.fixture
def rules(db):
    """The five rules the judge tests use (tests/evals/judge_helpers.py), by short name."""
    from tests.evals.judge_helpers import judge_rules

    return judge_rules()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Every test starts with empty throttle counts (and page caches) in the shared cache."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def wsgi_app():
    """The project's WSGI app for in-process HTTP clients (schemathesis, a generated client),
    keeping the test's database connection open between requests as Django's test client does."""
    from django.core import signals
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections

    handler = get_wsgi_application()

    def app(environ, start_response):
        # Django's test client connects close_old_connections again after each of its own
        # requests, so it is taken off on every call, not once: on PostgreSQL it would close
        # the test's connection (and its transaction) at the end of the request.
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        return handler(environ, start_response)

    yield app
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def import_dir(settings, tmp_path):
    """Files uploaded on the import page go to this test's own folder (returned)."""
    settings.STORAGES = {
        **settings.STORAGES,
        "imports": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "imports")},
        },
    }
    return tmp_path / "imports"
