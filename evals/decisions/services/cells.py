"""Decision cells: how many decisions share a kind version, agent version, choice, reviewers'
answer and gap bin. The decision accuracy page and API read these few rows instead of every
decision, so they cost the same at any number of calls.

Database triggers keep the counts current in the same transaction as the write that changed
them, whoever wrote it: the transcript importer's COPY of decisions and its deletes of rewritten
ones, a label's truth update (`decision_label_set`, `decision_labels_bulk`), a call deleted or
moved to another agent version by a replace import, the admin, a test's `objects.create`. On
PostgreSQL they are statement triggers with transition tables (one grouped insert per statement,
so a COPY of a million decisions adds one aggregate); on SQLite, row triggers.

The rows are deltas (core.deltas): a trigger only appends (+n for decisions that arrive in a cell,
-n for those that leave it) and a cell's count is the sum of its rows, so a reviewer's label never
waits for an import of the same agent version that is still running (an import is one
transaction). The writers that make most rows (the importer, the label services) fold them after
their commit (`decision_cells_compact`: one row per cell again); rows other writers leave are
folded by the next one. Folding deletes only committed rows it sees, so it is exact while others
append.

The triggers are (re)installed after every `migrate` (evals.decisions.apps).
`decision_cells_rebuild` recomputes every row (a repair tool); `--check` counts the cells that
differ from a full recount.
"""

from __future__ import annotations

from core.deltas import DeltaTable
from core.sql import sqlite_row_trigger, statement_trigger
from evals.decisions.models import DecisionCell

CELLS = DecisionCell._meta.db_table
KEY = "kind_version_id, agent_version_id, choice, truth, gap_bin"
COLUMNS = f"{KEY}, n"
TRIGGER_TABLES = ("evals_decision", "evals_transcript", CELLS)

# Gap histogram bins (ms): below 0 is an overlap, then every 200 ms to 1.6 s, then longer.
GAP_EDGES = [0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 2000, 3000]


def gap_bin_sql(column: str) -> str:
    """SQL for the gap's bin: how many of GAP_EDGES it is at or above (metrics.histogram's bin);
    -1 when there is no gap."""
    whens = " ".join(f"WHEN {column} < {edge} THEN {i}" for i, edge in enumerate(GAP_EDGES))
    return f"CASE WHEN {column} IS NULL THEN -1 {whens} ELSE {len(GAP_EDGES)} END"


def _upsert(select: str) -> str:
    return f"INSERT INTO {CELLS} ({COLUMNS}) {select}"


def _grouped(rows: str, sign: str, agent: str = "t.agent_version_id") -> str:
    """SELECT of cell deltas (sign: '' or '-') for decisions `rows` (alias d) joined to their
    call (alias t)."""
    return (
        f"SELECT d.kind_version_id, {agent} AS agent_version_id, d.choice, d.truth, "
        f"{gap_bin_sql('d.gap_ms')} AS gap_bin, {sign}count(*) AS n FROM {rows} "
        "JOIN evals_transcript t ON t.id = d.transcript_id WHERE true GROUP BY 1, 2, 3, 4, 5"
    )


def cells_select_sql() -> str:
    """SELECT of every cell from the decisions: the full recount."""
    return _grouped("evals_decision d", "")


def _postgres_sql() -> list[str]:
    changed = (
        "(SELECT o.id, o.agent_version_id AS old_av, n.agent_version_id AS new_av "
        "FROM old_rows o JOIN new_rows n ON n.id = o.id "
        "WHERE o.agent_version_id <> n.agent_version_id) m"
    )
    moved = (
        "SELECT k, a, c, tr, b, sum(n) FROM ("
        f"SELECT d.kind_version_id k, m.new_av a, d.choice c, d.truth tr, "
        f"{gap_bin_sql('d.gap_ms')} b, 1 n FROM {changed} "
        "JOIN evals_decision d ON d.transcript_id = m.id "
        "UNION ALL "
        f"SELECT d.kind_version_id, m.old_av, d.choice, d.truth, {gap_bin_sql('d.gap_ms')}, -1 "
        f"FROM {changed} JOIN evals_decision d ON d.transcript_id = m.id"
        ") x WHERE true GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
    )
    updated = (
        f"SELECT {KEY}, sum(n) FROM ("
        f"SELECT d.kind_version_id, t.agent_version_id, d.choice, d.truth, "
        f"{gap_bin_sql('d.gap_ms')} AS gap_bin, 1 AS n FROM new_rows d "
        "JOIN evals_transcript t ON t.id = d.transcript_id UNION ALL "
        f"SELECT d.kind_version_id, t.agent_version_id, d.choice, d.truth, "
        f"{gap_bin_sql('d.gap_ms')}, -1 FROM old_rows d "
        "JOIN evals_transcript t ON t.id = d.transcript_id"
        ") u WHERE true GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5"
    )
    insert = _upsert(_grouped("new_rows d", "") + " ORDER BY 1, 2, 3, 4, 5")
    delete = _upsert(_grouped("old_rows d", "-") + " ORDER BY 1, 2, 3, 4, 5")
    return [
        sql
        for table, event, name, func, body in (
            ("evals_decision", "INSERT", "ins", "on_decision_ins", insert),
            ("evals_decision", "DELETE", "del", "on_decision_del", delete),
            ("evals_decision", "UPDATE", "upd", "on_decision_upd", _upsert(updated)),
            ("evals_transcript", "UPDATE", "upd", "on_transcript_upd", _upsert(moved)),
        )
        for sql in statement_trigger(
            table, event, f"docket_cells_{name}", f"docket_cells_{func}", body
        )
    ]


def _sqlite_sql() -> list[str]:
    def one(row: str, sign: str) -> str:
        return _upsert(
            f"SELECT {row}.kind_version_id, t.agent_version_id, {row}.choice, {row}.truth, "
            f"{gap_bin_sql(f'{row}.gap_ms')}, {sign}1 FROM evals_transcript t "
            f"WHERE t.id = {row}.transcript_id"
        )

    def moved(agent: str, sign: str) -> str:
        return _upsert(
            f"SELECT d.kind_version_id, {agent}, d.choice, d.truth, {gap_bin_sql('d.gap_ms')}, "
            f"{sign}count(*) FROM evals_decision d WHERE d.transcript_id = NEW.id "
            "GROUP BY 1, 2, 3, 4, 5"
        )

    triggers = [
        ("docket_cells_ins", "INSERT", "evals_decision", "", [one("NEW", "")]),
        ("docket_cells_del", "DELETE", "evals_decision", "", [one("OLD", "-")]),
        (
            "docket_cells_upd",
            "UPDATE OF kind_version_id, transcript_id, choice, truth, gap_ms",
            "evals_decision",
            "",
            [one("OLD", "-"), one("NEW", "")],
        ),
        (
            "docket_cells_moved",
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


DECISION_CELLS = DeltaTable(
    what="decision cells",
    table=CELLS,
    key=KEY,
    sums="n",
    source="evals_decision",
    locks="evals_decision, evals_transcript",
    recount=cells_select_sql,
    trigger_tables=TRIGGER_TABLES,
    postgres=_postgres_sql,
    sqlite=_sqlite_sql,
)
cells_triggers_install = DECISION_CELLS.triggers_install
decision_cells_rebuild = DECISION_CELLS.rebuild
decision_cells_differences = DECISION_CELLS.differences
decision_cells_compact = DECISION_CELLS.fold
decision_cells_compact_on_commit = DECISION_CELLS.fold_on_commit
