"""Classifier spans: the runtime classifiers' verdicts counted ahead, so the thresholds pages read
a few thousand counts instead of every verdict (issue 26).

A row counts the classifier verdicts (errored ones left out) alike in everything the figures read
or filter by: rule version, judge, tenant, agent version, category, flagged, confidence and truth
(the tally's: 1 right, 0 wrong, -1 unmarked or tied), over one span of the calls' days (a call's
day is when it started, or came in, in the time zone the spans were installed with). The
confidence is a marked flagged verdict's own (the precision-recall thresholds are read from
those) and any other verdict's histogram bin (0, 10, ... 90; -1 for none): those are read only
by the histogram, so the rows of the many unmarked verdicts are bounded by the bins, not by the
distinct confidences a growing window fills in, and every figure stays exact. The spans
nest by fours: level L (0..3) counts the 4^L days from a multiple of 4^L (days since 1970-01-01);
level 4 counts every day. A window of days is a union of a few such spans (`spans_covering`: at
most 3 of each size at either end, and 64-day spans between), and a span of many days holds at most
one row per distinct key however many verdicts fall in it, so a page's work is bounded by the
keys, not the calls; a verdict counts in five rows.

Kept exact by PostgreSQL statement triggers, in the transaction of the write, whoever wrote it:
verdicts inserted, deleted or changed (`import_classifier_logs`, the classifier endpoint,
`import_verdicts`, a cascade), their categories, their tally rows (marks and settlements change
the truth through the tally's own triggers) and their calls' day, tenant or agent version. Each
applies the difference (minus the old key, plus the new) to all five levels at once, in one
upsert (rows reaching 0 go).
`classifier_spans_rebuild` recomputes every row; `classifier_spans_differences` counts the rows
that differ from that recompute (`classifier_spans_rebuild --check`). Other databases (SQLite, the
demo) have no spans: the selector counts the verdicts directly there.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import connection as default_connection
from django.db import transaction

from core.sql import triggers_install
from evals.classifiers.services import RULE_OF
from evals.classifiers.thresholds import BINS
from labeling.models import ClassifierSpan

logger = logging.getLogger(__name__)

SPANS = ClassifierSpan._meta.db_table
LEVELS = 4  # levels 0..3: spans of 1, 4, 16 and 64 days
EVERY_DAY = LEVELS  # level 4: one span of every day
EPOCH = dt.date(1970, 1, 1)
KEY = "rule_version_id, judge_id, tenant, agent_version_id, category, flagged, confidence, truth"
_RULES = ", ".join(f"'{r}'" for r in sorted(RULE_OF.values()))
# The classifiers' rule versions, looked up once per statement: the rows a trigger sees are
# filtered by one comparison each before any join (a COPY of conduct verdicts joins nothing).
_VERSIONS = (
    "SELECT rv.id FROM evals_ruleversion rv JOIN evals_rule r ON r.id = rv.rule_id "
    f"WHERE r.rule_id IN ({_RULES})"
)


def spans_time_zone() -> str:
    """The time zone the calls' days are counted in (the installed triggers carry it)."""
    return settings.TIME_ZONE


def _confidence(flagged: str, truth: str, confidence: str) -> str:
    """The confidence a span row keys on: a marked flagged verdict's own (the thresholds are read
    from those), any other's histogram bin (its lowest confidence, 0, 10, ... 90), -1 for none.
    Kept in step with evals.classifiers.thresholds.Item.counted, which the tests check it by."""
    return (
        f"CASE WHEN {confidence} IS NULL THEN -1 "
        f"WHEN {flagged} AND ({truth}) >= 0 THEN {confidence} "
        f"ELSE least({BINS - 1}, {confidence} * {BINS} / 100) * (100 / {BINS}) END"
    )


def _keys(
    sign: int,
    *,
    verdicts: str = "evals_verdict",
    transcripts: str = "evals_transcript",
    truth: str = "coalesce(vt.truth, -1)",
    category: str = "coalesce(c.category, '')",
    join: str = "",
) -> str:
    """SELECT the key, the day number and `sign` of each classifier verdict of `verdicts` (alias v),
    read with the call of `transcripts`, the given truth and category expressions."""
    tz = spans_time_zone().replace("'", "")
    return f"""
SELECT v.rule_version_id, v.judge_id, t.tenant, coalesce(t.agent_version_id, 0) AS agent_version_id,
       {category} AS category, v.flagged, {_confidence("v.flagged", truth, "v.confidence")}
           AS confidence,
       {truth} AS truth,
       ((coalesce(t.started_at, t.imported_at) AT TIME ZONE '{tz}')::date - DATE '1970-01-01')
           AS dn,
       {sign} AS s
FROM (SELECT * FROM {verdicts} WHERE error = '' AND rule_version_id = ANY (ARRAY({_VERSIONS}))) v
JOIN {transcripts} t ON t.id = v.transcript_id
LEFT JOIN evals_verdictcategory c ON c.verdict_id = v.id
LEFT JOIN labeling_verdict_tally vt ON vt.verdict_id = v.id
{join}"""


def _by_span(keys: str) -> str:
    """SELECT span rows (level, start, key, n) summing `keys` over all five levels."""
    return f"""
SELECT l.level,
       CASE WHEN l.level = {EVERY_DAY} THEN 0
            ELSE k.dn - (((k.dn % (1 << 2 * l.level)) + (1 << 2 * l.level)) % (1 << 2 * l.level))
       END,
       {", ".join(f"k.{c.strip()}" for c in KEY.split(","))}, sum(k.s)
FROM ({keys}) k CROSS JOIN generate_series(0, {EVERY_DAY}) l(level)
GROUP BY 1, 2, {", ".join(str(i) for i in range(3, 3 + len(KEY.split(","))))}"""


def _apply(*keys: str) -> list[str]:
    """Statements adding the signed keys' counts to the spans; the rows reaching 0 go."""
    union = " UNION ALL ".join(keys)
    return [
        f"""WITH up AS (INSERT INTO {SPANS} (level, start, {KEY}, n) {_by_span(union)}
HAVING sum(k.s) <> 0
ON CONFLICT (level, start, {KEY}) DO UPDATE SET n = {SPANS}.n + EXCLUDED.n RETURNING id, n)
SELECT array_agg(id) FILTER (WHERE n = 0) INTO gone FROM up""",
        f"DELETE FROM {SPANS} WHERE id = ANY (gone)",
    ]


def _fresh() -> str:
    return _by_span(_keys(1))


def _function(name: str, statements: list[str]) -> str:
    body = ";\n    ".join(statements)
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql
SET jit = off SET work_mem = '32MB' AS $body$
DECLARE gone bigint[];
BEGIN
    {body};
    RETURN NULL;
END
$body$"""


OLD, NEW, BOTH = (
    "OLD TABLE AS old_rows",
    "NEW TABLE AS new_rows",
    "OLD TABLE AS old_rows NEW TABLE AS new_rows",
)


def _moves(name: str, table: str, field: str, value: str, none: str) -> list[tuple]:
    """Triggers on `table`, whose row (alias x, o: its old self) gives a verdict's `field` the
    value `value` ("{}.truth") and whose absence gives it `none`: each write moves the verdicts'
    counts from the old value to the new one."""
    ins, dele = "JOIN new_rows x ON x.verdict_id = v.id", "JOIN old_rows x ON x.verdict_id = v.id"
    both = "JOIN old_rows o ON o.verdict_id = v.id JOIN new_rows x ON x.verdict_id = v.id"
    x, o = value.format("x"), value.format("o")
    return [
        (f"{name}_ins", table, "INSERT", NEW,
         [_keys(-1, **{field: none}, join=ins), _keys(1, **{field: x}, join=ins)]),
        (f"{name}_del", table, "DELETE", OLD,
         [_keys(-1, **{field: x}, join=dele), _keys(1, **{field: none}, join=dele)]),
        (f"{name}_upd", table, "UPDATE", BOTH,
         [_keys(-1, **{field: o}, join=both), _keys(1, **{field: x}, join=both)]),
    ]  # fmt: skip


def _postgres_sql() -> list[str]:
    # (function, table, event, transition tables, signed keys)
    triggers = [
        ("docket_spans_verdict_ins", "evals_verdict", "INSERT", NEW,
         [_keys(1, verdicts="new_rows")]),
        ("docket_spans_verdict_del", "evals_verdict", "DELETE", OLD,
         [_keys(-1, verdicts="old_rows")]),
        ("docket_spans_verdict_upd", "evals_verdict", "UPDATE", BOTH,
         [_keys(-1, verdicts="old_rows"), _keys(1, verdicts="new_rows")]),
        *_moves("docket_spans_tally", TALLY, "truth", "coalesce({}.truth, -1)", "-1"),
        *_moves("docket_spans_category", CATEGORY, "category", "{}.category", "''"),
        ("docket_spans_transcript_upd", "evals_transcript", "UPDATE", BOTH,
         [_keys(-1, transcripts="old_rows"), _keys(1, transcripts="new_rows")]),
    ]  # fmt: skip
    out = []
    for fn, table, event, tables, keys in triggers:
        out += [
            _function(fn, _apply(*keys)),
            f"DROP TRIGGER IF EXISTS {fn} ON {table}",
            (
                f"CREATE TRIGGER {fn} AFTER {event} ON {table} REFERENCING {tables} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}()"
            ),
        ]
    # The tally's rebuild truncates it: count the truths again from scratch.
    out += [
        _function("docket_spans_tally_truncate", _rebuild_statements()),
        f"DROP TRIGGER IF EXISTS docket_spans_tally_truncate ON {TALLY}",
        (
            f"CREATE TRIGGER docket_spans_tally_truncate AFTER TRUNCATE ON {TALLY} "
            "FOR EACH STATEMENT EXECUTE FUNCTION docket_spans_tally_truncate()"
        ),
    ]
    return out


TALLY = "labeling_verdict_tally"
CATEGORY = "evals_verdictcategory"
TRIGGER_TABLES = ("evals_verdict", "evals_transcript", TALLY, CATEGORY, SPANS)


def _rebuild_statements() -> list[str]:
    return [f"DELETE FROM {SPANS}", f"INSERT INTO {SPANS} (level, start, {KEY}, n) {_fresh()}"]


def spans_kept(connection=None) -> bool:
    """Whether this database keeps the spans (PostgreSQL)."""
    return (connection or default_connection).vendor == "postgresql"


def classifier_spans_triggers_install(*, connection=None) -> bool:
    """(Re)create the spans' triggers (idempotent); False when not PostgreSQL or no tables yet."""
    connection = connection or default_connection
    if not spans_kept(connection):
        return False
    return triggers_install(
        connection, what="classifier spans", tables=TRIGGER_TABLES, postgres=_postgres_sql,
        sqlite=list,
    )  # fmt: skip


def classifier_spans_rebuild(*, connection=None) -> int:
    """Recompute every span row from the verdicts; return how many rows there are.

    Holds verdicts, categories, tally and calls still while it runs (SHARE locks)."""
    connection = connection or default_connection
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(
            f"LOCK TABLE evals_verdict, evals_transcript, {TALLY}, {CATEGORY} IN SHARE MODE"
        )
        for sql in _rebuild_statements():
            cursor.execute(sql)
        n = cursor.rowcount
    logger.info("classifier_spans_rebuilt", extra={"rows": n})
    return n


def classifier_spans_differences(*, connection=None) -> int:
    """Return how many span keys differ from a fresh recount (0 when the spans are right)."""
    connection = connection or default_connection
    stored = f"SELECT level, start, {KEY}, n FROM {SPANS}"
    fresh = _fresh()
    with connection.cursor() as cursor:
        cursor.execute("SET jit = off")
        cursor.execute(
            f"SELECT count(DISTINCT (level, start, {KEY})) FROM (({stored} EXCEPT ALL {fresh}) "
            f"UNION ALL ({fresh} EXCEPT ALL {stored})) d"
        )
        return cursor.fetchone()[0]


def spans_covering(since: dt.date, until: dt.date) -> list[tuple[int, int]]:
    """Return the (level, start) spans whose days are exactly those from `since` to `until`."""
    a, b = (since - EPOCH).days, (until - EPOCH).days
    out = []
    while a <= b:
        level = LEVELS - 1
        while level and (a % 4**level or a + 4**level - 1 > b):
            level -= 1
        out.append((level, a))
        a += 4**level
    return out
