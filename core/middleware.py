"""Refuse input no view can use, before any view runs: NUL characters and undecodable bytes.

PostgreSQL cannot store or compare a NUL character, so a `\\x00` in a path, a query value or a
form value would otherwise reach a query and answer 500. Django replaces bytes that are not
UTF-8 with U+FFFD; those are refused too, so a filter never silently matches on a mangled value.
A bad path answers 404, a bad query value, form value, cookie or Authorization header 400
naming it: in the API's error body under /api/; on pages the console's 404 page, or plain text.
An /api/ path that no route matches answers the API's error body too. A page view that lets a
service's refusal (core.errors.DomainError, e.g. a bad whole number) through answers its status
with its message, never a 500; the API's views answer it through the API's exception handler.
"""

from django.http import Http404, HttpResponse, JsonResponse

from core.api.errors import error_body
from core.errors import DomainError

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _bad(value: str) -> str | None:
    if "\x00" in value:
        return "contains a NUL character"
    if "\ufffd" in value:
        return "is not valid UTF-8"
    return None


def _first_bad(query) -> tuple[str, str] | None:
    for key, values in query.lists():
        why = _bad(key)
        if why:
            return repr(key)[1:-1][:40], f"parameter name {why}"
        for value in values:
            why = _bad(value)
            if why:
                return key, why
    return None


def _first_bad_cookie(cookies) -> tuple[str, str] | None:
    for name, value in cookies.items():
        if "\x00" in name or "\x00" in value:
            return "Cookie", f"cookie {repr(name)[1:-1][:40]} contains a NUL character"
    return None


class BadInputMiddleware:
    """404 for a path, 400 for a query or form value, holding NUL or undecodable bytes."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        why = _bad(request.path)
        if why:
            return self._refuse(request, 404, "not_found", f"No such page: the path {why}.")
        found = _first_bad(request.GET) or _first_bad_cookie(request.COOKIES)
        if found is None and "\x00" in request.META.get("HTTP_AUTHORIZATION", ""):
            found = ("Authorization", "header contains a NUL character")
        if found is None and request.method == "POST" and request.content_type in FORM_TYPES:
            found = _first_bad(request.POST)
        if found:
            name, why = found
            return self._refuse(
                request,
                400,
                "invalid",
                f"{name}: {why}.",
                [{"field": name, "message": f"{why}."}],
            )
        response = self.get_response(request)
        if (
            response.status_code == 404
            and request.path.startswith("/api/")
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            # No route matched (a negative id, say): the API's error body, not the console's page.
            return JsonResponse(
                error_body(f"No such API path: {request.path[:200]}", "not_found"), status=404
            )
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, DomainError):
            return self._refuse(
                request, exception.status, exception.code, exception.detail, exception.error_items()
            )
        return None

    def _refuse(self, request, status, code, detail, errors=None):
        if request.path.startswith("/api/"):
            return JsonResponse(error_body(detail, code, errors), status=status)
        if status == 404:
            raise Http404(detail)
        return HttpResponse(detail, status=status, content_type="text/plain; charset=utf-8")
