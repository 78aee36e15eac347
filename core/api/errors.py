"""The API's one error body, and the one exception handler that produces it.

Every error the API answers has this shape (`detail` is always a string):

    {"detail": "transcript: No call with id 'x'.", "code": "invalid",
     "errors": [{"field": "transcript", "message": "No call with id 'x'.", "code": "invalid"}]}

`code` is machine-readable (invalid, parse_error, not_authenticated, authentication_failed,
permission_denied, not_found, method_not_allowed, unsupported_media_type, conflict, throttled,
or a service's own code such as import_failed). `errors` lists each problem with `message` and,
where known, `field` (a body key or query parameter, `turns[1].speaker` when nested) or `line`
(imports: a line number or `item N`).
"""

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.errors import DomainError


class ErrorItemSerializer(serializers.Serializer):
    message = serializers.CharField()
    field = serializers.CharField(
        required=False, help_text="the body key or query parameter at fault: `turns[1].speaker`"
    )
    line = serializers.CharField(
        required=False, help_text="imports: the line number, or `item N` in a JSON array"
    )
    reason = serializers.CharField(required=False, help_text="imports: why, without the place")
    code = serializers.CharField(required=False, help_text="e.g. required, invalid, blank")


class ErrorSerializer(serializers.Serializer):
    """The body of every API error."""

    detail = serializers.CharField(help_text="what went wrong, in one line")
    code = serializers.CharField(
        help_text="invalid, parse_error, not_authenticated, permission_denied, not_found, "
        "conflict, throttled, ... or a service's own code such as import_failed"
    )
    errors = ErrorItemSerializer(many=True)


def error_body(detail: str, code: str, errors: list[dict] | None = None) -> dict:
    """Return the one error body."""
    return {"detail": str(detail), "code": code, "errors": errors or []}


def _items(detail, path: str = ""):
    """Flatten DRF's nested error detail into items naming the field path."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "" if key in (api_settings.NON_FIELD_ERRORS_KEY, NON_FIELD_ERRORS) else str(key)
            if name and path:
                name = f"{path}[{name}]" if name.isdigit() else f"{path}.{name}"
            yield from _items(value, name or path)
    elif isinstance(detail, list | tuple):
        for i, value in enumerate(detail):
            yield from _items(value, f"{path}[{i}]" if isinstance(value, dict) else path)
    else:
        item = {"message": str(detail)}
        if path:
            item["field"] = path
        code = getattr(detail, "code", None)
        if code:
            item["code"] = code
        yield item


def _summary(items: list[dict], fallback: str) -> str:
    if not items:
        return fallback
    first = items[0]
    line = f"{first['field']}: {first['message']}" if first.get("field") else first["message"]
    if len(items) > 1:
        line += f" (and {len(items) - 1} more)"
    return line


def _from_django(exc: DjangoValidationError) -> exceptions.ValidationError:
    if hasattr(exc, "error_dict"):
        return exceptions.ValidationError(exc.message_dict)
    return exceptions.ValidationError(exc.messages)


def exception_handler(exc, context):
    """Answer any API error with the one error body (REST_FRAMEWORK's EXCEPTION_HANDLER)."""
    if isinstance(exc, DomainError):
        set_rollback()
        return Response(error_body(exc.detail, exc.code, exc.error_items()), status=exc.status)
    if isinstance(exc, DjangoValidationError):
        exc = _from_django(exc)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    if isinstance(exc, exceptions.ValidationError):
        items = list(_items(exc.detail))
        response.data = error_body(_summary(items, "Invalid input."), exc.default_code, items)
    elif isinstance(exc.detail, dict):  # e.g. a ParseError naming the field at fault
        items = list(_items(exc.detail))
        response.data = error_body(_summary(items, exc.default_detail), exc.default_code, items)
    else:
        detail = exc.detail if isinstance(exc.detail, str) else exc.default_detail
        response.data = error_body(detail, getattr(exc.detail, "code", None) or exc.default_code)
    return response
