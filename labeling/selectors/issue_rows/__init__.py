"""Reads for issue rows, by concern; every public name is importable from here.

- sheet: the sheet's filters, their parsing, keyset pages and filter options.
- detail: one row's progress, next steps, history and call link.
- export: the sheet as CSV.
- prefill: what the three ways out of a row (write a rule, add a signal, fix a rule) start from.
- trends: the per-day trends panel.
"""

from .detail import (
    call_link,
    issue_row_detail,
    issue_row_events,
    issue_row_judged_at_turn,
    issue_row_next_steps,
    issue_row_suggested_way,
    rule_version_progress,
)
from .export import CSV_COLUMNS, csv_cell, issue_sheet_csv
from .prefill import (
    issue_row_fix_choices,
    issue_row_group_guess,
    issue_row_rule_prefill,
    issue_row_signal_prefill,
)
from .sheet import (
    PAGE_SIZE,
    SORTS,
    UNTRIAGED,
    IssueRowFilterError,
    SheetFilters,
    SheetPage,
    assignable_users,
    cursor_encode,
    issue_rows_filtered,
    issue_sheet_filters_parse,
    issue_sheet_options,
    issue_sheet_page,
    sheet_ordering,
)
from .trends import Trends, issue_trends

__all__ = [
    "CSV_COLUMNS",
    "PAGE_SIZE",
    "SORTS",
    "UNTRIAGED",
    "IssueRowFilterError",
    "SheetFilters",
    "SheetPage",
    "Trends",
    "assignable_users",
    "call_link",
    "csv_cell",
    "cursor_encode",
    "issue_row_detail",
    "issue_row_events",
    "issue_row_fix_choices",
    "issue_row_group_guess",
    "issue_row_judged_at_turn",
    "issue_row_next_steps",
    "issue_row_rule_prefill",
    "issue_row_signal_prefill",
    "issue_row_suggested_way",
    "issue_rows_filtered",
    "issue_sheet_csv",
    "issue_sheet_filters_parse",
    "issue_sheet_options",
    "issue_sheet_page",
    "issue_trends",
    "rule_version_progress",
    "sheet_ordering",
]
