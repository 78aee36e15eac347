"""Verdict counts: how many verdicts each judge gave on each rule version for calls of each agent
version, how many flagged (and not errored) and how many errored. The dashboard, the rules list,
a rule's page and an issue row's progress read these few rows instead of every verdict, so they
cost the same at any number of calls (issue 26).

Database triggers keep the counts current in the same transaction as the write that changed
them, whoever wrote it: the verdict importer's and the classifier logs' COPY, a judge worker's
verdicts and its re-run of an errored one, verdicts deleted with their call or by a replace
import, a call moved to another agent version, the admin, a test's `objects.create`. On
PostgreSQL they are statement triggers with transition tables (one grouped insert per statement,
so a COPY of a million verdicts adds one aggregate); on SQLite, row triggers.

The rows are deltas (core.deltas), so judge workers and imports writing verdicts of the same
rule version at once never wait for each other here. The writers that make most rows (the
importers, the judge workers, a replace import's forgetting) fold them after their commit
(`verdict_counts_compact`); rows other writers leave are folded by the next one.

The triggers are (re)installed after every `migrate` (evals.judging.apps).
`verdict_counts_rebuild` recomputes every row (a repair tool); `--check` counts the keys that
differ from a full recount.
"""

from __future__ import annotations

from core.deltas import DeltaTable
from core.sql import sqlite_row_trigger, statement_trigger
from evals.judging.models import VerdictCount

COUNTS = VerdictCount._meta.db_table
KEY = "rule_version_id, judge_id, agent_version_id"
SUMS = "n, flagged, errored"
COLUMNS = f"{KEY}, {SUMS}"
TRIGGER_TABLES = ("evals_verdict", "evals_transcript", COUNTS)


def _flagged(row: str) -> str:
    return f"({row}.flagged AND {row}.error = '')"


def _errored(row: str) -> str:
    return f"({row}.error <> '')"


def _insert(select: str) -> str:
    return f"INSERT INTO {COUNTS} ({COLUMNS}) {select}"


def _grouped(rows: str, sign: str) -> str:
    """SELECT of count deltas (sign: '' or '-') for verdicts `rows` (alias d) joined to their
    calls (alias t)."""
    return (
        f"SELECT d.rule_version_id, d.judge_id, t.agent_version_id, {sign}count(*), "
        f"{sign}count(*) FILTER (WHERE {_flagged('d')}), "
        f"{sign}count(*) FILTER (WHERE {_errored('d')}) FROM {rows} "
        "JOIN evals_transcript t ON t.id = d.transcript_id WHERE true GROUP BY 1, 2, 3"
    )


def counts_select_sql() -> str:
    """SELECT of every count from the verdicts: the full recount."""
    return _grouped("evals_verdict d", "")


def _postgres_sql() -> list[str]:
    def statement(rows: str, sign: str) -> str:
        # One hash join of the statement's rows with the calls and one hash aggregate (EXPLAIN
        # ANALYZE, 300,000 verdicts: 150-200 ms, as much as each foreign key's check). Looking the
        # calls up first by their distinct ids costs more, and so does an ORDER BY: the planner
        # then sorts every row to group them. Appended rows take no lock, so their order is free.
        return _insert(_grouped(f"{rows} d", sign))

    # Only the rows whose counted columns changed (a judge run's deletion sets judge_run_id of
    # all its verdicts): each leaves its old key and joins its new one.
    changed = (
        "(SELECT s.sign, CASE WHEN s.sign > 0 THEN n.transcript_id ELSE o.transcript_id END tr, "
        "CASE WHEN s.sign > 0 THEN n.rule_version_id ELSE o.rule_version_id END rv, "
        "CASE WHEN s.sign > 0 THEN n.judge_id ELSE o.judge_id END j, "
        f"CASE WHEN s.sign > 0 THEN {_flagged('n')} ELSE {_flagged('o')} END f, "
        f"CASE WHEN s.sign > 0 THEN {_errored('n')} ELSE {_errored('o')} END e "
        "FROM old_rows o JOIN new_rows n ON n.id = o.id CROSS JOIN (VALUES (1), (-1)) s(sign) "
        "WHERE (o.transcript_id, o.rule_version_id, o.judge_id, o.flagged, o.error) "
        "IS DISTINCT FROM (n.transcript_id, n.rule_version_id, n.judge_id, n.flagged, n.error)) d"
    )
    sums = "sum(d.sign), sum(d.sign * d.f::int), sum(d.sign * d.e::int)"
    updated = (
        f"SELECT d.rv, d.j, t.agent_version_id, {sums} FROM {changed} "
        "JOIN evals_transcript t ON t.id = d.tr WHERE true GROUP BY 1, 2, 3 "
        f"HAVING ({sums}) <> (0, 0, 0)"
    )
    moved = (
        "SELECT d.rule_version_id, d.judge_id, "
        "CASE WHEN s.sign > 0 THEN m.new_av ELSE m.old_av END, sum(s.sign), "
        f"sum(s.sign * {_flagged('d')}::int), sum(s.sign * {_errored('d')}::int) "
        "FROM (SELECT o.id, o.agent_version_id AS old_av, n.agent_version_id AS new_av "
        "FROM old_rows o JOIN new_rows n ON n.id = o.id "
        "WHERE o.agent_version_id <> n.agent_version_id) m "
        "JOIN evals_verdict d ON d.transcript_id = m.id CROSS JOIN (VALUES (1), (-1)) s(sign) "
        "WHERE true GROUP BY 1, 2, 3"
    )
    return [
        sql
        for table, event, name, body in (
            ("evals_verdict", "INSERT", "ins", statement("new_rows", "")),
            ("evals_verdict", "DELETE", "del", statement("old_rows", "-")),
            ("evals_verdict", "UPDATE", "upd", _insert(updated)),
            ("evals_transcript", "UPDATE", "moved", _insert(moved)),
        )
        for sql in statement_trigger(
            table, event, f"docket_counts_{name}", f"docket_counts_on_{name}", body
        )
    ]


def _sqlite_sql() -> list[str]:
    def one(row: str, sign: str) -> str:
        return _insert(
            f"SELECT {row}.rule_version_id, {row}.judge_id, t.agent_version_id, {sign}1, "
            f"{sign}{_flagged(row)}, {sign}{_errored(row)} FROM evals_transcript t "
            f"WHERE t.id = {row}.transcript_id"
        )

    def moved(agent: str, sign: str) -> str:
        return _insert(
            f"SELECT d.rule_version_id, d.judge_id, {agent}, {sign}count(*), "
            f"{sign}count(*) FILTER (WHERE {_flagged('d')}), "
            f"{sign}count(*) FILTER (WHERE {_errored('d')}) FROM evals_verdict d "
            "WHERE d.transcript_id = NEW.id GROUP BY 1, 2, 3"
        )

    triggers = [
        ("docket_counts_ins", "INSERT", "evals_verdict", "", [one("NEW", "")]),
        ("docket_counts_del", "DELETE", "evals_verdict", "", [one("OLD", "-")]),
        (
            "docket_counts_upd",
            "UPDATE OF transcript_id, rule_version_id, judge_id, flagged, error",
            "evals_verdict",
            "",
            [one("OLD", "-"), one("NEW", "")],
        ),
        (
            "docket_counts_moved",
            "UPDATE OF agent_version_id",
            "evals_transcript",
            "OLD.agent_version_id IS NOT NEW.agent_version_id",
            [moved("OLD.agent_version_id", "-"), moved("NEW.agent_version_id", "")],
        ),
    ]
    return [
        sql
        for name, event, table, when, body in triggers
        for sql in sqlite_row_trigger(name, table, event, when, body)
    ]


VERDICT_COUNTS = DeltaTable(
    what="verdict counts",
    table=COUNTS,
    key=KEY,
    sums=SUMS,
    source="evals_verdict",
    locks="evals_verdict, evals_transcript",
    recount=counts_select_sql,
    trigger_tables=TRIGGER_TABLES,
    postgres=_postgres_sql,
    sqlite=_sqlite_sql,
)
counts_triggers_install = VERDICT_COUNTS.triggers_install
verdict_counts_rebuild = VERDICT_COUNTS.rebuild
verdict_counts_differences = VERDICT_COUNTS.differences
verdict_counts_compact = VERDICT_COUNTS.fold
verdict_counts_compact_on_commit = VERDICT_COUNTS.fold_on_commit
