"""The verdict tally: one row per marked verdict saying how it counts in calibration.

A row is recomputed from the verdict's marks, settlement, sample items and the verdict itself by
database triggers, in the same transaction as the write that changed any of them, whoever wrote it:
`mark_set` / `mark_undo`, `verdict_settle`, a cascade (a reviewer or sample item deleted), a bulk
insert, the admin or a test's `Mark.objects.create`. Triggers rather than calls in the services,
because marks and settlements are also written outside
them and a tally that drifts is worse than none.

On PostgreSQL the refresh first locks the verdict row (FOR NO KEY UPDATE, which does not block the
foreign-key checks of new marks), then recounts in a fresh snapshot: two reviewers marking the same
verdict at once are serialised on that lock and the second recount sees the first mark.

The triggers are (re)installed by the migration that made the table and after every `migrate`
(SQLite drops a table's triggers when a later migration rebuilds the table).
`verdict_tally_rebuild` recomputes every row: a repair tool, and the fast path after a bulk load
that ran with triggers off (bench/calibration.py).
"""

from __future__ import annotations

import logging

from django.db import connection as default_connection
from django.db import transaction

from core.sql import (
    empty_while_filled,
    rows_differing,
    sqlite_row_trigger,
    tables_empty,
    triggers_install,
)
from labeling.models import VerdictTally
from labeling.selectors.resolution import resolved_verdicts_sql
from labeling.services.tally_cells import (
    CELLS,
    TALLY_CELLS,
    tally_cells_differences,
    tally_cells_triggers_install,
)

logger = logging.getLogger(__name__)

TALLY = VerdictTally._meta.db_table
COLUMNS = (
    "verdict_id, rule_version_id, judge_id, n_marks, n_right, truth, cell, pair, outside, weight"
)


def tally_select_sql(where: str) -> str:
    """Return the SELECT of tally rows for the verdicts (alias v) that pass `where` and have marks.

    The same per-verdict resolution as the calibration selector's marks path (majority, settlement
    overrides, ties wait, errored apart, weight 1/p,
    first and last mark), so both agree by construction.
    """
    resolved = resolved_verdicts_sql(where, extra=", pv.r AS r")
    return f"""
SELECT verdict_id, rule_version_id, judge_id, n, r, t,
       CASE WHEN e = 1 THEN 5 WHEN t IS NULL THEN 4 ELSE f * 2 + t END,
       CASE WHEN e = 0 AND n >= 2 THEN 1 + fc * 2 + lc ELSE 0 END,
       o, w
FROM ({resolved}) x"""


def _refresh_statements(rhs: str) -> list[str]:
    """Statements recomputing the tally of the verdicts
    whose id is `rhs` ("= NEW.verdict_id", "IN (...)")."""
    return [
        f"DELETE FROM {TALLY} WHERE verdict_id {rhs}",
        f"INSERT INTO {TALLY} ({COLUMNS}) {tally_select_sql(f'WHERE v.id {rhs}')}",
    ]


_MARKS_OF_ASSIGNMENT = "SELECT verdict_id FROM labeling_mark WHERE assignment_id = NEW.id"
_MARKS_OF_ITEM = (
    "SELECT m.verdict_id FROM labeling_mark m JOIN labeling_assignment a ON a.id = m.assignment_id "
    "WHERE a.item_id = NEW.id"
)

# (table, trigger name, event, WHEN condition or "",
# verdict ids to refresh as a SQL right-hand side)
_SQLITE_TRIGGERS = [
    ("labeling_mark", "docket_tally_mark_ins", "INSERT", "", "= NEW.verdict_id"),
    ("labeling_mark", "docket_tally_mark_del", "DELETE", "", "= OLD.verdict_id"),
    (
        "labeling_mark",
        "docket_tally_mark_upd",
        "UPDATE OF verdict_id, correct, assignment_id",
        "",
        "IN (OLD.verdict_id, NEW.verdict_id)",
    ),
    ("labeling_settlement", "docket_tally_settlement_ins", "INSERT", "", "= NEW.verdict_id"),
    ("labeling_settlement", "docket_tally_settlement_del", "DELETE", "", "= OLD.verdict_id"),
    (
        "labeling_settlement",
        "docket_tally_settlement_upd",
        "UPDATE OF verdict_id, correct",
        "",
        "IN (OLD.verdict_id, NEW.verdict_id)",
    ),
    (
        "evals_verdict",
        "docket_tally_verdict_upd",
        "UPDATE OF flagged, error, rule_version_id, judge_id",
        (
            "OLD.flagged IS NOT NEW.flagged OR OLD.error IS NOT NEW.error "
            "OR OLD.rule_version_id IS NOT NEW.rule_version_id OR OLD.judge_id IS NOT NEW.judge_id"
        ),
        "= NEW.id",
    ),
    (
        "labeling_assignment",
        "docket_tally_assignment_upd",
        "UPDATE OF item_id",
        "OLD.item_id IS NOT NEW.item_id",
        f"IN ({_MARKS_OF_ASSIGNMENT})",
    ),
    (
        "labeling_sampleitem",
        "docket_tally_sampleitem_upd",
        "UPDATE OF inclusion_probability",
        "OLD.inclusion_probability IS NOT NEW.inclusion_probability",
        f"IN ({_MARKS_OF_ITEM})",
    ),
]


def _sqlite_sql() -> list[str]:
    out = []
    for table, name, event, when, rhs in _SQLITE_TRIGGERS:
        out += sqlite_row_trigger(name, table, event, when, _refresh_statements(rhs))
    return out


def _postgres_sql() -> list[str]:
    delete, insert = _refresh_statements("= p_verdict")
    refresh = f"""
CREATE OR REPLACE FUNCTION docket_verdict_tally_refresh(p_verdict bigint) RETURNS void
LANGUAGE plpgsql AS $body$
BEGIN
    -- Serialise writers of one verdict; the statements below then run in a fresh snapshot.
    PERFORM 1 FROM evals_verdict WHERE id = p_verdict FOR NO KEY UPDATE;
    {delete};
    {insert};
END
$body$"""
    on_row = """
CREATE OR REPLACE FUNCTION docket_tally_on_verdict_row() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM docket_verdict_tally_refresh(OLD.verdict_id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.verdict_id <> OLD.verdict_id) THEN
        PERFORM docket_verdict_tally_refresh(NEW.verdict_id);
    END IF;
    RETURN NULL;
END
$body$"""
    on_verdict = """
CREATE OR REPLACE FUNCTION docket_tally_on_verdict() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    PERFORM docket_verdict_tally_refresh(NEW.id);
    RETURN NULL;
END
$body$"""
    on_assignment = f"""
CREATE OR REPLACE FUNCTION docket_tally_on_assignment() RETURNS trigger
LANGUAGE plpgsql AS $body$
DECLARE vid bigint;
BEGIN
    FOR vid IN SELECT DISTINCT verdict_id FROM ({_MARKS_OF_ASSIGNMENT}) x ORDER BY verdict_id LOOP
        PERFORM docket_verdict_tally_refresh(vid);
    END LOOP;
    RETURN NULL;
END
$body$"""
    on_item = f"""
CREATE OR REPLACE FUNCTION docket_tally_on_sampleitem() RETURNS trigger
LANGUAGE plpgsql AS $body$
DECLARE vid bigint;
BEGIN
    FOR vid IN SELECT DISTINCT verdict_id FROM ({_MARKS_OF_ITEM}) x ORDER BY verdict_id LOOP
        PERFORM docket_verdict_tally_refresh(vid);
    END LOOP;
    RETURN NULL;
END
$body$"""
    triggers = [
        (
            "labeling_mark",
            "INSERT OR DELETE OR UPDATE OF verdict_id, correct, assignment_id",
            "",
            "docket_tally_on_verdict_row",
        ),
        (
            "labeling_settlement",
            "INSERT OR DELETE OR UPDATE OF verdict_id, correct",
            "",
            "docket_tally_on_verdict_row",
        ),
        (
            "evals_verdict",
            "UPDATE OF flagged, error, rule_version_id, judge_id",
            (
                "OLD.flagged IS DISTINCT FROM NEW.flagged OR OLD.error IS "
                "DISTINCT FROM NEW.error OR OLD.rule_version_id IS DISTINCT FROM "
                "NEW.rule_version_id OR OLD.judge_id IS DISTINCT FROM NEW.judge_id"
            ),
            "docket_tally_on_verdict",
        ),
        (
            "labeling_assignment",
            "UPDATE OF item_id",
            "OLD.item_id IS DISTINCT FROM NEW.item_id",
            "docket_tally_on_assignment",
        ),
        (
            "labeling_sampleitem",
            "UPDATE OF inclusion_probability",
            "OLD.inclusion_probability IS DISTINCT FROM NEW.inclusion_probability",
            "docket_tally_on_sampleitem",
        ),
    ]
    out = [refresh, on_row, on_verdict, on_assignment, on_item]
    for table, event, when, fn in triggers:
        when_sql = f" WHEN ({when})" if when else ""
        out += [
            f"DROP TRIGGER IF EXISTS docket_tally ON {table}",
            (
                f"CREATE TRIGGER docket_tally AFTER {event} ON {table} "
                f"FOR EACH ROW{when_sql} EXECUTE FUNCTION {fn}()"
            ),
        ]
    return out


TRIGGER_TABLES = (
    "labeling_mark",
    "labeling_settlement",
    "evals_verdict",
    "labeling_assignment",
    "labeling_sampleitem",
    TALLY,
)


def tally_triggers_install(*, connection=None) -> bool:
    """(Re)create the tally's triggers and its cells' (idempotent);
    return False when the tables are not there yet."""
    connection = connection or default_connection
    return triggers_install(
        connection,
        what="verdict tally",
        tables=TRIGGER_TABLES,
        postgres=_postgres_sql,
        sqlite=_sqlite_sql,
    ) and tally_cells_triggers_install(connection=connection)


def verdict_tally_rebuild(*, connection=None) -> int:
    """Recompute every tally row from the marks; return how many marked verdicts there are.

    Holds marks and settlements still while it runs
    (PostgreSQL: SHARE lock), so no write slips between.
    """
    connection = connection or default_connection
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL jit = off")
            cursor.execute("LOCK TABLE labeling_mark, labeling_settlement IN SHARE MODE")
        tables_empty(cursor, [TALLY, CELLS])
        cursor.execute(f"INSERT INTO {TALLY} ({COLUMNS}) {tally_select_sql('')}")
        n = cursor.rowcount
        TALLY_CELLS.rebuild(connection=connection)  # one row per cell, whatever triggers did
    logger.info("verdict_tally_rebuilt", extra={"verdicts": n})
    return n


def verdict_tally_rebuild_if_empty(*, connection=None) -> int | None:
    """Rebuild the tally when it holds no row while marks exist (marks made before the tally
    table); return the rebuilt count, or None when nothing was needed."""
    connection = connection or default_connection
    if not empty_while_filled(TALLY, "labeling_mark", connection=connection):
        return None
    return verdict_tally_rebuild(connection=connection)


def verdict_tally_differences(*, connection=None) -> int:
    """Return how many verdicts' tally rows, and how many of the cells summed from them
    (labeling.services.tally_cells), differ from a fresh recount (0 when both are right)."""
    connection = connection or default_connection
    stored = f"SELECT {COLUMNS} FROM {TALLY}"
    differ = rows_differing(tally_select_sql(""), stored, "verdict_id", connection=connection)
    return len(differ) + tally_cells_differences(connection=connection)
