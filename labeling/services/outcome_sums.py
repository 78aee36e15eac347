"""The outcome check sums: what predicts the outcome, precomputed per question and check.

Two tables (labeling.models): `OutcomeCheck`, one row per rated call, question and check with the
call's mean rating and weight; `OutcomeCheckSums`, their count and weighted sums per question,
check and side. Both are kept by database triggers in the same transaction as the write that
changed what they depend on, whoever wrote it (the rating service, imports, `verdicts_import`'s
COPY, judge runs, the conversation judge, the admin, a test's factory): outcome ratings, verdicts,
conversation scores, and a sample item's inclusion probability or an assignment's item. A change
refreshes the calls it touched: their old rows are subtracted from the sums, recomputed from the
sources, and added back. Verdicts of calls nobody rated cost the import only a look-up per call.

What the triggers do not follow: renaming a rule's id or a judge, or changing a judge's kind
(the check's name and source are copied); `outcome_sums_rebuild` puts that right, and its
`--check` compares both tables with a full recompute (exit 1 on a difference).

On PostgreSQL the verdict, rating and score triggers are per statement (transition tables), so a
COPY of 400,000 verdicts refreshes each rated call once; SQLite's are per row. The triggers are
(re)installed after every `migrate`, as the verdict tally's are.
"""

from __future__ import annotations

import logging
import math

from django.db import OperationalError, transaction
from django.db import connection as default_connection

from core.sql import statements_execute
from labeling.models import BAD_AT_MOST, OutcomeCheck, OutcomeCheckSums
from labeling.selectors.outcomes import ANY_CHECK as ANY
from labeling.selectors.outcomes import CONVERSATION_SCORE_LOW
from labeling.selectors.resolution import weight_sql

logger = logging.getLogger(__name__)

CHECKS = OutcomeCheck._meta.db_table
SUMS = OutcomeCheckSums._meta.db_table
CHECK_COLUMNS = "question_id, transcript_id, src, chk, fired, x, w"
SUM_COLUMNS = ("n", "bad", "w", "wx", "w2", "w2x", "w2x2")
KEY = "question_id, src, chk, fired"


def checks_select_sql(where: str) -> str:
    """Return the SELECT of OutcomeCheck rows (CHECK_COLUMNS) of the rated calls whose transcript
    id passes `where` (a condition on a column `tid`, "" for all): per (judge kind, rule)
    fired when any of its non-errored verdicts was flagged; per conversation judge, fired at a
    score of CONVERSATION_SCORE_LOW or less (errored scores say nothing); and ANY, fired when any
    non-errored verdict was flagged."""
    cond = f"AND {where.replace('tid', '{t}')}" if where else ""
    fired = "MAX(CASE WHEN v.flagged THEN 1 ELSE 0 END)"
    return f"""
SELECT o.qid AS question_id, o.tid AS transcript_id, f.src AS src, f.chk AS chk,
       f.fired AS fired, o.x AS x, {weight_sql("o.p")} AS w
FROM (
    SELECT r.question_id AS qid, r.transcript_id AS tid,
           AVG(CAST(r.rating AS DOUBLE PRECISION)) AS x, MAX(i.inclusion_probability) AS p
    FROM labeling_outcomerating r
    LEFT JOIN labeling_assignment a ON a.id = r.assignment_id
    LEFT JOIN labeling_sampleitem i ON i.id = a.item_id
    WHERE 1 = 1 {cond.format(t="r.transcript_id")}
    GROUP BY r.question_id, r.transcript_id
) o
JOIN (
    SELECT v.transcript_id AS tid, j.kind AS src, ru.rule_id AS chk, {fired} AS fired
    FROM evals_verdict v
    JOIN evals_judge j ON j.id = v.judge_id
    JOIN evals_ruleversion rv ON rv.id = v.rule_version_id
    JOIN evals_rule ru ON ru.id = rv.rule_id
    WHERE v.error = '' {cond.format(t="v.transcript_id")}
    GROUP BY v.transcript_id, j.kind, ru.rule_id
    UNION ALL
    SELECT s.transcript_id, 'conversation', j.name,
           MAX(CASE WHEN s.score <= {CONVERSATION_SCORE_LOW} THEN 1 ELSE 0 END)
    FROM evals_conversationscore s JOIN evals_judge j ON j.id = s.judge_id
    WHERE s.error = '' AND s.score IS NOT NULL {cond.format(t="s.transcript_id")}
    GROUP BY s.transcript_id, j.name
    UNION ALL
    SELECT v.transcript_id, '{ANY}', '', {fired}
    FROM evals_verdict v
    WHERE v.error = '' {cond.format(t="v.transcript_id")}
    GROUP BY v.transcript_id
) f ON f.tid = o.tid"""


def sums_select_sql(source: str, where: str = "") -> str:
    """Return the SELECT of sums rows (KEY, then SUM_COLUMNS as s0..s6) over the OutcomeCheck
    rows of `source` (a table or a parenthesised SELECT of CHECK_COLUMNS) that pass `where`."""
    return f"""
SELECT {KEY}, COUNT(*) AS s0, SUM(CASE WHEN x <= {BAD_AT_MOST} THEN 1 ELSE 0 END) AS s1,
       SUM(w) AS s2, SUM(w * x) AS s3, SUM(w * w) AS s4, SUM(w * w * x) AS s5,
       SUM(w * w * x * x) AS s6
FROM {source} c WHERE 1 = 1 {where}
GROUP BY {KEY}"""


def _fold_sql(rhs: str, sign: int) -> str:
    """Add (sign 1) or subtract (-1) the OutcomeCheck rows of the calls `rhs` to the sums."""
    signed = ", ".join(f"{sign} * s{i}" for i in range(len(SUM_COLUMNS)))
    update = ", ".join(f"{c} = {SUMS}.{c} + excluded.{c}" for c in SUM_COLUMNS)
    return (
        f"INSERT INTO {SUMS} ({KEY}, {', '.join(SUM_COLUMNS)}) "
        f"SELECT {KEY}, {signed} FROM ({sums_select_sql(CHECKS, f'AND c.transcript_id {rhs}')}) d "
        f"WHERE 1 = 1 ON CONFLICT ({KEY}) DO UPDATE SET {update}"
    )


def _refresh_statements(rhs: str) -> list[str]:
    """Statements refreshing the calls whose transcript id is `rhs` ("= NEW.transcript_id",
    "= ANY(p_ids)"): subtract their rows, recompute them, add them back."""
    return [
        _fold_sql(rhs, -1),
        f"DELETE FROM {CHECKS} WHERE transcript_id {rhs}",
        f"INSERT INTO {CHECKS} ({CHECK_COLUMNS}) {checks_select_sql(f'tid {rhs}')}",
        _fold_sql(rhs, 1),
        f"DELETE FROM {SUMS} WHERE n = 0",
    ]


# (table, event, rhs) of SQLite's row triggers; PostgreSQL's come from the same lists.
_CALL_TABLES = ("labeling_outcomerating", "evals_verdict", "evals_conversationscore")
_RATINGS_OF_ASSIGNMENT = "SELECT transcript_id FROM labeling_outcomerating WHERE assignment_id = "
_RATINGS_OF_ITEM = (
    "SELECT r.transcript_id FROM labeling_outcomerating r "
    "JOIN labeling_assignment a ON a.id = r.assignment_id WHERE a.item_id = "
)


def _sqlite_sql() -> list[str]:
    triggers = []
    for table in _CALL_TABLES:
        triggers += [
            (table, "ins", "INSERT", "", "= NEW.transcript_id"),
            (table, "del", "DELETE", "", "= OLD.transcript_id"),
            (table, "upd", "UPDATE", "", "IN (OLD.transcript_id, NEW.transcript_id)"),
        ]
    triggers += [
        (
            "labeling_assignment",
            "upd",
            "UPDATE OF item_id",
            "OLD.item_id IS NOT NEW.item_id",
            f"IN ({_RATINGS_OF_ASSIGNMENT}NEW.id)",
        ),
        (
            "labeling_sampleitem",
            "upd",
            "UPDATE OF inclusion_probability",
            "OLD.inclusion_probability IS NOT NEW.inclusion_probability",
            f"IN ({_RATINGS_OF_ITEM}NEW.id)",
        ),
    ]
    out = []
    for table, suffix, event, when, rhs in triggers:
        name = f"docket_outcome_{table}_{suffix}"
        body = ";\n".join(_refresh_statements(rhs))
        when_sql = f" WHEN {when}" if when else ""
        out += [
            f"DROP TRIGGER IF EXISTS {name}",
            (
                f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when_sql}\n"
                f"BEGIN\n{body};\nEND"
            ),
        ]
    return out


def _postgres_sql() -> list[str]:
    statements = ";\n    ".join(_refresh_statements("= ANY(p_ids)"))
    refresh = f"""
CREATE OR REPLACE FUNCTION docket_outcome_refresh(p_ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $body$
BEGIN
    IF p_ids IS NULL OR cardinality(p_ids) = 0 THEN
        RETURN;
    END IF;
    -- Serialise writers of one call (in id order); the statements then run in a fresh snapshot.
    PERFORM 1 FROM evals_transcript WHERE id = ANY(p_ids) ORDER BY id FOR NO KEY UPDATE;
    {statements};
END
$body$"""
    # Verdicts of calls nobody rated need nothing; ratings and scores always refresh their calls.
    rated = "WHERE EXISTS (SELECT 1 FROM labeling_outcomerating r WHERE r.transcript_id = d.t)"
    rated_or_kept = f"{rated} OR EXISTS (SELECT 1 FROM {CHECKS} c WHERE c.transcript_id = d.t)"
    on_rows = f"""
CREATE OR REPLACE FUNCTION docket_outcome_on_rows() RETURNS trigger
LANGUAGE plpgsql AS $body$
DECLARE ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        ids := ARRAY(SELECT d.t FROM (SELECT DISTINCT transcript_id AS t FROM new_rows) d
                     {rated} ORDER BY d.t);
    ELSIF TG_OP = 'DELETE' THEN
        ids := ARRAY(SELECT d.t FROM (SELECT DISTINCT transcript_id AS t FROM old_rows) d
                     {rated_or_kept} ORDER BY d.t);
    ELSE
        ids := ARRAY(SELECT d.t FROM (SELECT transcript_id AS t FROM new_rows
                                      UNION SELECT transcript_id FROM old_rows) d
                     {rated_or_kept} ORDER BY d.t);
    END IF;
    PERFORM docket_outcome_refresh(ids);
    RETURN NULL;
END
$body$"""
    on_assignment = f"""
CREATE OR REPLACE FUNCTION docket_outcome_on_assignment() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    PERFORM docket_outcome_refresh(ARRAY(SELECT DISTINCT t.transcript_id
        FROM ({_RATINGS_OF_ASSIGNMENT}NEW.id) t ORDER BY 1));
    RETURN NULL;
END
$body$"""
    on_item = f"""
CREATE OR REPLACE FUNCTION docket_outcome_on_sampleitem() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    PERFORM docket_outcome_refresh(ARRAY(SELECT DISTINCT t.transcript_id
        FROM ({_RATINGS_OF_ITEM}NEW.id) t ORDER BY 1));
    RETURN NULL;
END
$body$"""
    out = [refresh, on_rows, on_assignment, on_item]
    for table in _CALL_TABLES:
        for event, ref in (
            ("INSERT", "NEW TABLE AS new_rows"),
            ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
            ("DELETE", "OLD TABLE AS old_rows"),
        ):
            name = f"docket_outcome_{event.lower()}"
            out += [
                f"DROP TRIGGER IF EXISTS {name} ON {table}",
                (
                    f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {ref} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION docket_outcome_on_rows()"
                ),
            ]
    for table, column, fn in (
        ("labeling_assignment", "item_id", "docket_outcome_on_assignment"),
        ("labeling_sampleitem", "inclusion_probability", "docket_outcome_on_sampleitem"),
    ):
        out += [
            f"DROP TRIGGER IF EXISTS docket_outcome ON {table}",
            (
                f"CREATE TRIGGER docket_outcome AFTER UPDATE OF {column} ON {table} FOR EACH ROW "
                f"WHEN (OLD.{column} IS DISTINCT FROM NEW.{column}) EXECUTE FUNCTION {fn}()"
            ),
        ]
    return out


TRIGGER_TABLES = (*_CALL_TABLES, "labeling_assignment", "labeling_sampleitem", CHECKS, SUMS)


def outcome_triggers_install(*, connection=None) -> bool:
    """(Re)create the outcome sums' triggers (idempotent); False when the tables are not there."""
    connection = connection or default_connection
    if connection.vendor not in ("postgresql", "sqlite"):
        raise NotImplementedError(f"outcome sums triggers: no support for {connection.vendor}")
    if not set(TRIGGER_TABLES) <= set(connection.introspection.table_names()):
        return False
    statements_execute(
        _postgres_sql() if connection.vendor == "postgresql" else _sqlite_sql(),
        connection=connection,
    )
    return True


def outcome_sums_rebuild(*, connection=None) -> int:
    """Recompute both tables from the sources; return how many check rows there are. Holds the
    ratings, verdicts and scores still while it runs (PostgreSQL: SHARE lock)."""
    connection = connection or default_connection
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(f"LOCK TABLE {', '.join(_CALL_TABLES)} IN SHARE MODE")
            try:
                with transaction.atomic(using=connection.alias):
                    cursor.execute(f"TRUNCATE {CHECKS}, {SUMS}")
            except OperationalError:  # deferred constraint checks pending in this transaction
                cursor.execute(f"DELETE FROM {CHECKS}")
                cursor.execute(f"DELETE FROM {SUMS}")
        else:
            cursor.execute(f"DELETE FROM {CHECKS}")
            cursor.execute(f"DELETE FROM {SUMS}")
        cursor.execute(f"INSERT INTO {CHECKS} ({CHECK_COLUMNS}) {checks_select_sql('')}")
        n = cursor.rowcount
        cursor.execute(
            f"INSERT INTO {SUMS} ({KEY}, {', '.join(SUM_COLUMNS)}) {sums_select_sql(CHECKS)}"
        )
    logger.info("outcome_sums_rebuilt", extra={"checks": n})
    return n


def outcome_sums_rebuild_if_empty(*, connection=None) -> int | None:
    """Rebuild when no check row exists while ratings do (ratings made before the tables)."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {CHECKS})")
        if cursor.fetchone()[0]:
            return None
        cursor.execute("SELECT EXISTS (SELECT 1 FROM labeling_outcomerating)")
        if not cursor.fetchone()[0]:
            return None
    return outcome_sums_rebuild(connection=connection)


def _close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        # The sums are added and subtracted call by call: equal to a recompute up to rounding.
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def outcome_sums_differences(*, connection=None) -> int:
    """Return how many check rows and sums rows differ from a full recompute (0 when right)."""
    connection = connection or default_connection
    fresh_checks = checks_select_sql("")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {CHECK_COLUMNS} FROM ({fresh_checks}) a")
        fresh = {tuple(r[:5]): tuple(r[5:]) for r in cursor.fetchall()}
        cursor.execute(f"SELECT {CHECK_COLUMNS} FROM {CHECKS}")
        stored = {}
        duplicates = 0
        for r in cursor.fetchall():
            duplicates += tuple(r[:5]) in stored
            stored[tuple(r[:5])] = tuple(r[5:])
        cursor.execute(sums_select_sql(f"({fresh_checks})"))
        fresh_sums = {tuple(r[:4]): tuple(r[4:]) for r in cursor.fetchall()}
        cursor.execute(f"SELECT {KEY}, {', '.join(SUM_COLUMNS)} FROM {SUMS}")
        stored_sums = {tuple(r[:4]): tuple(r[4:]) for r in cursor.fetchall()}
    differ = duplicates
    for want, have in ((fresh, stored), (fresh_sums, stored_sums)):
        for key in want.keys() | have.keys():
            a, b = want.get(key), have.get(key)
            if a is None or b is None or not all(_close(x, y) for x, y in zip(a, b, strict=True)):
                differ += 1
    return differ
