"""Paging for every API list: bounded pages, and a 400 naming the parameter on nonsense.

`?limit=` above the maximum is clamped to it (DOCKET_API_MAX_LIMIT, default 1000); a limit or
offset that is not a whole number in range (`-1`, `abc`, more than 64 bits) is refused with 400.
"""

from django.conf import settings
from rest_framework import pagination
from rest_framework.exceptions import ValidationError

INT64_MAX = 2**63 - 1


def max_limit() -> int:
    return settings.DOCKET_API_MAX_LIMIT


def int_param(request, name: str, *, default: int, minimum: int, clamp: int | None = None) -> int:
    """Return the whole-number query parameter `name` (default when absent or blank).

    Raises ValidationError (400) naming the parameter when it is not a whole number from
    `minimum` to 2**63 - 1; a value above `clamp` is lowered to it.
    """
    raw = request.query_params.get(name)
    if raw is None or raw.strip() == "":
        value = default
    else:
        raw = raw.strip()
        digits = raw[1:] if raw[:1] in "+-" else raw
        if not digits.isdigit() or not digits.isascii():
            raise ValidationError({name: f"must be a whole number, got {raw[:40]!r}"})
        value = int(raw)
        if value < minimum or value > INT64_MAX:
            raise ValidationError({name: f"must be a whole number from {minimum} to {INT64_MAX}"})
    return min(value, clamp) if clamp is not None else value


def limit_param(request, *, default: int, name: str = "limit") -> int:
    """Return the page size asked for, at least 1, clamped to DOCKET_API_MAX_LIMIT."""
    return int_param(request, name, default=default, minimum=1, clamp=max_limit())


def _limit_schema(default: int) -> dict:
    return {
        "name": "limit",
        "required": False,
        "in": "query",
        "description": f"rows per page (default {default}; above {max_limit()} counts as "
        f"{max_limit()})",
        "schema": {"type": "integer", "minimum": 1, "format": "int64"},
    }


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """`?limit=&offset=` pages with a count, for lists of modest size."""

    default_limit = 100

    def get_limit(self, request):
        return limit_param(request, default=self.default_limit)

    def get_offset(self, request):
        return int_param(request, self.offset_query_param, default=0, minimum=0)

    def get_schema_operation_parameters(self, view):
        return [
            _limit_schema(self.default_limit),
            {
                "name": "offset",
                "required": False,
                "in": "query",
                "description": "rows to skip",
                "schema": {"type": "integer", "minimum": 0, "format": "int64"},
            },
        ]


class CursorPagination(pagination.CursorPagination):
    """`?limit=&cursor=` keyset pages by id: as fast on the millionth row as on the first."""

    ordering = "id"
    page_size = 100
    page_size_query_param = "limit"
    # Positions are ids: a cursor whose position is not a number is refused before the query.
    integer_position = True

    def get_page_size(self, request):
        return limit_param(request, default=self.page_size)

    def decode_cursor(self, request):
        try:
            cursor = super().decode_cursor(request)
        except pagination.NotFound:
            cursor = None
            bad = True
        else:
            position = cursor.position if cursor else None
            bad = (
                self.integer_position
                and position is not None
                and not position.lstrip("-").isdigit()
            )
        if bad:
            raise ValidationError(
                {"cursor": "not a cursor this API made: use `next` or `previous`"}
            )
        return cursor

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": "cursor",
                "required": False,
                "in": "query",
                "description": "the page to read: from a response's `next` or `previous`",
                "schema": {"type": "string"},
            },
            _limit_schema(self.page_size),
        ]
