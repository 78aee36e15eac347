"""Sample item counts: how many calls each day's sample holds. The samples list (the API's
`/api/v1/samples/`, the review page, the dashboard's reviewer panel) reads these few rows instead
of counting every sample's items, so it costs the same however many calls a sample holds.

Database triggers on sample items keep them current in the same transaction as the write, whoever
wrote it: the daily draw's bulk insert, a call queued by hand, the cascades that delete items with
their call or their sample, the admin. On PostgreSQL they are statement triggers with transition
tables (one grouped insert per statement); on SQLite, row triggers.

Why delta rows (core.deltas) and not a count column on DailySample: a column would be written back
stale by any full `save()` of a sample loaded before its items changed (the admin, a script), and
deleting calls of the same sample at once would wait on its row. Appended rows have neither
problem, need no foreign key (a deleted sample's rows sum to 0, in whichever order the sample and
its items go), and reuse the rebuild, check and fold every other delta table has. The draw and a
call queued by hand fold them after their commit; rows a deletion leaves are folded by the next.

The triggers are (re)installed after every `migrate` (labeling.apps).
`sample_item_counts_rebuild` recomputes every row (a repair tool); `--check` counts the samples
whose count differs from a full recount.
"""

from __future__ import annotations

from core.deltas import DeltaTable
from core.sql import sqlite_row_triggers, statement_trigger
from labeling.models import SampleItem, SampleItemCount

COUNTS = SampleItemCount._meta.db_table
ITEMS = SampleItem._meta.db_table


def _insert(select: str) -> str:
    return f"INSERT INTO {COUNTS} (sample_id, n) {select}"


def _grouped(rows: str, sign: str) -> str:
    """SELECT of count deltas (sign '' or '-') for the sample items `rows`."""
    return f"SELECT sample_id, {sign}count(*) FROM {rows} GROUP BY sample_id"


def counts_select_sql() -> str:
    """SELECT of every sample's count from its items: the full recount."""
    return _grouped(ITEMS, "")


def _postgres_sql() -> list[str]:
    # Only the items moved to another sample (the admin can): each leaves one and joins the other.
    moved = _insert(
        "SELECT s, sum(d) FROM (SELECT o.sample_id AS s, -1 AS d FROM old_rows o "
        "JOIN new_rows n ON n.id = o.id WHERE n.sample_id <> o.sample_id UNION ALL "
        "SELECT n.sample_id, 1 FROM old_rows o JOIN new_rows n ON n.id = o.id "
        "WHERE n.sample_id <> o.sample_id) m GROUP BY s HAVING sum(d) <> 0"
    )
    return [
        sql
        for event, name, body in (
            ("INSERT", "ins", _insert(_grouped("new_rows", ""))),
            ("DELETE", "del", _insert(_grouped("old_rows", "-"))),
            ("UPDATE", "upd", moved),
        )
        for sql in statement_trigger(
            ITEMS, event, f"docket_sample_counts_{name}", f"docket_sample_counts_on_{name}", body
        )
    ]


def _sqlite_sql() -> list[str]:
    def one(row: str, sign: str) -> str:
        return _insert(f"VALUES ({row}.sample_id, {sign}1)")

    return sqlite_row_triggers(
        [
            ("docket_sample_counts_ins", "INSERT", ITEMS, "", [one("NEW", "")]),
            ("docket_sample_counts_del", "DELETE", ITEMS, "", [one("OLD", "-")]),
            (
                "docket_sample_counts_upd",
                "UPDATE OF sample_id",
                ITEMS,
                "OLD.sample_id <> NEW.sample_id",
                [one("OLD", "-"), one("NEW", "")],
            ),
        ]
    )


SAMPLE_ITEM_COUNTS = DeltaTable(
    what="sample item counts",
    table=COUNTS,
    key="sample_id",
    sums="n",
    source=ITEMS,
    locks=ITEMS,
    recount=counts_select_sql,
    trigger_tables=(ITEMS, COUNTS),
    postgres=_postgres_sql,
    sqlite=_sqlite_sql,
)
sample_item_counts_triggers_install = SAMPLE_ITEM_COUNTS.triggers_install
sample_item_counts_rebuild = SAMPLE_ITEM_COUNTS.rebuild
sample_item_counts_differences = SAMPLE_ITEM_COUNTS.differences
sample_item_counts_compact_on_commit = SAMPLE_ITEM_COUNTS.fold_on_commit
