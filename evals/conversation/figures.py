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

from core.deltas import DeltaTable
from core.sql import rows_differing, sqlite_row_triggers, statement_trigger
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
    return [
        sql
        for table, event, name, statements in (
            (SCORES, "INSERT", "score_ins", _deltas(pg, new, None)),
            (SCORES, "DELETE", "score_del", _deltas(pg, None, old)),
            (SCORES, "UPDATE", "score_upd", _deltas(pg, new, old)),
            (
                "evals_transcript",
                "UPDATE",
                "transcript_upd",
                _deltas(pg, (moved, "m.new_av"), (moved, "m.old_av")),
            ),
        )
        for sql in statement_trigger(
            table,
            event,
            "docket_convfig_" + name.split("_")[1],
            f"docket_convfig_on_{name}",
            ";\n".join(statements),
        )
    ]


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
    return sqlite_row_triggers(triggers)


def _recount(i: int) -> str:
    return figures_select_sql(default_connection.vendor)[i]


def _table(i: int, **kw) -> DeltaTable:
    _, table, key, values = TABLES[i]
    return DeltaTable(
        what="conversation figures",
        table=table,
        key=key,
        sums=", ".join(values),
        source=SCORES,
        locks=f"{SCORES}, evals_transcript",
        recount=lambda: _recount(i),
        trigger_tables=TRIGGER_TABLES,
        **kw,
    )


# The triggers write both tables; the first installs them.
CONVERSATION_SUMS = _table(0, postgres=_postgres_sql, sqlite=_sqlite_sql)
CONVERSATION_FINDINGS = _table(1, postgres=list, sqlite=list)
figures_triggers_install = CONVERSATION_SUMS.triggers_install


def conversation_figures_rebuild(*, connection=None) -> int:
    """Recompute every row from the scores; return how many (agent version, judge) pairs there
    are. Holds scores and calls still while it runs (PostgreSQL: SHARE lock)."""
    with transaction.atomic(using=(connection or default_connection).alias):
        CONVERSATION_FINDINGS.rebuild(connection=connection)
        n = CONVERSATION_SUMS.rebuild(connection=connection)
    logger.info("conversation_figures_rebuilt", extra={"pairs": n})
    return n


def conversation_figures_rebuild_if_empty(*, connection=None) -> int | None:
    """Rebuild when no row exists while scores do (scores made before the tables); return the
    rebuilt count, or None when nothing was needed."""
    if CONVERSATION_SUMS.rebuild_if_empty(connection=connection) is None:
        return None
    return CONVERSATION_FINDINGS.rebuild(connection=connection)


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
    return the rows written (core.deltas)."""
    return CONVERSATION_SUMS.fold(connection=connection) + CONVERSATION_FINDINGS.fold(
        connection=connection
    )


def conversation_figures_compact_on_commit(*, connection=None) -> None:
    """Fold the figures once the current transaction commits (once however often it is asked)."""
    CONVERSATION_SUMS.fold_on_commit(connection=connection)
    CONVERSATION_FINDINGS.fold_on_commit(connection=connection)
