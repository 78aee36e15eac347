"""The conversation figures: per agent version and conversation judge, the scores counted (errored
apart), their sum and sum of squares, the calls with findings (ConversationSums), and the findings
by type (ConversationFindingCount). The conversation pages and API read these few rows instead of
every score, so they cost the same at any number of calls.

Database triggers keep them current in the same transaction as the write that changed them,
whoever wrote it: a judge run's item storing or re-storing a score (`conversation_score_put`), a
stored result (`conversation_result_record`), a call deleted (its scores with it) or moved to
another agent version by a replace import, the admin, a test's `objects.create`. On PostgreSQL
they are statement triggers with transition tables (one grouped insert per statement); on SQLite,
row triggers.

The rows are deltas, as the decision cells' are (evals.decisions.services.cells): a trigger only
appends (+ for scores that arrive under a key, - for those that leave it) and a figure is the sum
of its rows, so judge workers storing scores of the same agent version at once never wait on one
row. The writers fold them after their commit (`conversation_figures_compact`: one row per key
again): a judge run's items commit one by one, so each folds the few rows the others left.

The triggers are (re)installed after every `migrate` (evals.conversation.apps).
`conversation_figures_rebuild` recomputes every row (a repair tool); `--check` counts the
(agent version, judge) pairs whose figures differ from a full recount.
"""

from __future__ import annotations

import logging

from django.db import connection as default_connection
from django.db import transaction

from core.sql import (
    deltas_fold,
    empty_while_filled,
    on_commit_once,
    plpgsql_trigger_function,
    postgres_statement_trigger,
    rows_differing,
    sqlite_row_trigger,
    triggers_install,
)
from evals.conversation.models import ConversationFindingCount, ConversationScore, ConversationSums

logger = logging.getLogger(__name__)

SUMS = ConversationSums._meta.db_table
FINDINGS = ConversationFindingCount._meta.db_table
SCORES = ConversationScore._meta.db_table
KEY = "agent_version_id, judge_id"
FINDING_KEY = f"{KEY}, kind"
SUM_VALUES = ("calls", "errored", "n", "sx", "sxx", "flagged")
TRIGGER_TABLES = (SCORES, "evals_transcript", SUMS, FINDINGS)


def _sums_select(source: str, sign: str, agent: str, vendor: str) -> str:
    """SELECT of ConversationSums deltas (sign: '' or '-') for the scores (alias s) of `source`,
    counted under agent version `agent`."""
    ok = "s.error = ''"
    some = "s.findings <> '[]'::jsonb" if vendor == "postgresql" else "json(s.findings) <> '[]'"
    values = {
        "calls": f"CASE WHEN {ok} THEN 1 ELSE 0 END",
        "errored": f"CASE WHEN {ok} THEN 0 ELSE 1 END",
        "n": f"CASE WHEN {ok} AND s.score IS NOT NULL THEN 1 ELSE 0 END",
        "sx": f"CASE WHEN {ok} THEN COALESCE(s.score, 0) ELSE 0 END",
        "sxx": f"CASE WHEN {ok} THEN COALESCE(s.score * s.score, 0) ELSE 0 END",
        "flagged": f"CASE WHEN {ok} AND {some} THEN 1 ELSE 0 END",
    }
    sums = ", ".join(f"{sign}sum({sql}) AS {name}" for name, sql in values.items())
    return (
        f"SELECT {agent} AS agent_version_id, s.judge_id AS judge_id, {sums} "
        f"FROM {source} WHERE true GROUP BY 1, 2"
    )


def _findings_select(source: str, sign: str, agent: str, vendor: str) -> str:
    """SELECT of ConversationFindingCount deltas for the scores (alias s) of `source`: their
    findings by type ('?' when a finding gives none), errored scores left out."""
    if vendor == "postgresql":
        each = (
            "jsonb_array_elements(CASE WHEN jsonb_typeof(s.findings) = 'array' "
            "THEN s.findings ELSE '[]'::jsonb END) f"
        )
        kind = "f ->> 'type'"
    else:
        each = (
            "json_each(CASE WHEN json_type(s.findings) = 'array' THEN s.findings ELSE '[]' END) f"
        )
        kind = "CASE WHEN f.type = 'object' THEN json_extract(f.value, '$.type') END"
    return (
        f"SELECT {agent} AS agent_version_id, s.judge_id AS judge_id, "
        f"COALESCE({kind}, '?') AS kind, {sign}count(*) AS n "
        f"FROM {source}, {each} WHERE s.error = '' GROUP BY 1, 2, 3"
    )


def _joined(rows: str) -> str:
    """The scores `rows` (alias s) with their call (alias t)."""
    return f"{rows} s JOIN evals_transcript t ON t.id = s.transcript_id"


def _net(key: str, values: tuple[str, ...], selects: list[str]) -> str:
    """SELECT of the deltas of `selects` added up per key, keys that come to nothing left out."""
    sums = ", ".join(f"sum({v})" for v in values)
    having = " OR ".join(f"sum({v}) <> 0" for v in values)
    union = " UNION ALL ".join(selects)
    return f"SELECT {key}, {sums} FROM ({union}) x GROUP BY {key} HAVING {having}"


TABLES = (
    (_sums_select, SUMS, KEY, SUM_VALUES),
    (_findings_select, FINDINGS, FINDING_KEY, ("n",)),
)


def _deltas(vendor: str, plus: tuple[str, str] | None, minus: tuple[str, str] | None) -> list[str]:
    """The INSERTs of both tables' deltas: + for the scores of `plus` (source, agent version),
    - for those of `minus`; with both, netted per key (keys that come to nothing left out)."""
    out = []
    for select, table, key, values in TABLES:
        selects = [
            select(side[0], sign, side[1], vendor)
            for side, sign in ((plus, ""), (minus, "-"))
            if side
        ]
        sql = selects[0] if len(selects) == 1 else _net(key, values, selects)
        out.append(f"INSERT INTO {table} ({key}, {', '.join(values)}) {sql}")
    return out


def figures_select_sql(vendor: str) -> tuple[str, str]:
    """SELECTs of every row of the two tables from the scores: the full recount."""
    sums, findings = (
        select(_joined(SCORES), "", "t.agent_version_id", vendor) for select, *_ in TABLES
    )
    return sums, findings


def _postgres_sql() -> list[str]:
    pg, agent = "postgresql", "t.agent_version_id"
    new, old = (_joined("new_rows"), agent), (_joined("old_rows"), agent)
    moved = (
        "(SELECT o.id, o.agent_version_id AS old_av, n.agent_version_id AS new_av "
        "FROM old_rows o JOIN new_rows n ON n.id = o.id "
        "WHERE o.agent_version_id <> n.agent_version_id) m "
        f"JOIN {SCORES} s ON s.transcript_id = m.id"
    )
    out = [
        plpgsql_trigger_function("docket_convfig_on_score_ins", *_deltas(pg, new, None)),
        plpgsql_trigger_function("docket_convfig_on_score_del", *_deltas(pg, None, old)),
        plpgsql_trigger_function("docket_convfig_on_score_upd", *_deltas(pg, new, old)),
        plpgsql_trigger_function(
            "docket_convfig_on_transcript_upd",
            *_deltas(pg, (moved, "m.new_av"), (moved, "m.old_av")),
        ),
    ]
    for table, event, name, func in (
        (SCORES, "INSERT", "docket_convfig_ins", "docket_convfig_on_score_ins"),
        (SCORES, "DELETE", "docket_convfig_del", "docket_convfig_on_score_del"),
        (SCORES, "UPDATE", "docket_convfig_upd", "docket_convfig_on_score_upd"),
        ("evals_transcript", "UPDATE", "docket_convfig_upd", "docket_convfig_on_transcript_upd"),
    ):
        out += postgres_statement_trigger(name, table, event, func)
    return out


def _sqlite_sql() -> list[str]:
    def row(ref: str) -> tuple[str, str]:
        """The score row NEW or OLD as a one-row table, with its call."""
        cols = ", ".join(
            f"{ref}.{c} AS {c}" for c in ("transcript_id", "judge_id", "score", "error", "findings")
        )
        return _joined(f"(SELECT {cols})"), "t.agent_version_id"

    call = f"{SCORES} s JOIN (SELECT NEW.id AS id) m ON s.transcript_id = m.id"
    triggers = [
        ("docket_convfig_ins", "INSERT", SCORES, "", _deltas("sqlite", row("NEW"), None)),
        ("docket_convfig_del", "DELETE", SCORES, "", _deltas("sqlite", None, row("OLD"))),
        (
            "docket_convfig_upd",
            "UPDATE OF transcript_id, judge_id, score, error, findings",
            SCORES,
            "",
            _deltas("sqlite", row("NEW"), row("OLD")),
        ),
        (
            "docket_convfig_moved",
            "UPDATE OF agent_version_id",
            "evals_transcript",
            "OLD.agent_version_id IS NOT NEW.agent_version_id",
            _deltas("sqlite", (call, "NEW.agent_version_id"), (call, "OLD.agent_version_id")),
        ),
    ]
    return [
        sql
        for name, event, table, when, body in triggers
        for sql in sqlite_row_trigger(name, table, event, when, body)
    ]


def figures_triggers_install(*, connection=None) -> bool:
    """(Re)create the figures' triggers (idempotent); return False when the tables are not there."""
    return triggers_install(
        connection or default_connection,
        what="conversation figures",
        tables=TRIGGER_TABLES,
        postgres=_postgres_sql,
        sqlite=_sqlite_sql,
    )


def conversation_figures_rebuild(*, connection=None) -> int:
    """Recompute every row from the scores; return how many (agent version, judge) pairs there
    are. Holds scores and calls still while it runs (PostgreSQL: SHARE lock)."""
    connection = connection or default_connection
    sums, findings = figures_select_sql(connection.vendor)
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(f"LOCK TABLE {SCORES}, evals_transcript IN SHARE MODE")
        cursor.execute(f"DELETE FROM {SUMS}")
        cursor.execute(f"DELETE FROM {FINDINGS}")
        cursor.execute(f"INSERT INTO {FINDINGS} ({FINDING_KEY}, n) {findings}")
        cursor.execute(f"INSERT INTO {SUMS} ({KEY}, {', '.join(SUM_VALUES)}) {sums}")
        n = cursor.rowcount
    logger.info("conversation_figures_rebuilt", extra={"pairs": n})
    return n


def conversation_figures_rebuild_if_empty(*, connection=None) -> int | None:
    """Rebuild when no row exists while scores do (scores made before the tables); return the
    rebuilt count, or None when nothing was needed."""
    connection = connection or default_connection
    if not empty_while_filled(SUMS, SCORES, connection=connection):
        return None
    return conversation_figures_rebuild(connection=connection)


def conversation_figures_differences(*, connection=None) -> int:
    """Return how many (agent version, judge) pairs differ from a full recount of the scores, in
    the stored rows or in the figures the pages show (0 when all agree)."""
    from evals.conversation.selectors import _conversation_versions, conversation_versions

    connection = connection or default_connection
    fresh = figures_select_sql(connection.vendor)
    differ: set[tuple] = set()
    for select, (_, table, key, values) in zip(fresh, TABLES, strict=True):
        stored = _net(key, values, [f"SELECT {key}, {', '.join(values)} FROM {table}"])
        differ |= {r[:2] for r in rows_differing(select, stored, key, connection=connection)}
    shown = {(r.version_id, r.judge_id): r for r in conversation_versions()}
    reference = {(r.version_id, r.judge_id): r for r in _conversation_versions(None)}
    differ |= {k for k in shown.keys() | reference.keys() if shown.get(k) != reference.get(k)}
    return len(differ)


def conversation_figures_compact(*, connection=None) -> int:
    """Fold both tables' delta rows into one row per key (dropping keys that come to nothing);
    return the rows left. Exact while others append (core.sql.deltas_fold)."""
    connection = connection or default_connection
    return deltas_fold(SUMS, KEY, SUM_VALUES, connection=connection) + deltas_fold(
        FINDINGS, FINDING_KEY, ("n",), connection=connection
    )


def conversation_figures_compact_on_commit(*, connection=None) -> None:
    """Fold the figures once the current transaction commits (once however often it is asked)."""
    on_commit_once(_compact_default, connection=connection or default_connection)


def _compact_default() -> None:
    conversation_figures_compact()
