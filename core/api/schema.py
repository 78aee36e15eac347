"""The OpenAPI schema's error responses, written once for every operation.

Every operation documents the one error body (core.api.errors.ErrorSerializer) for 400 (bad
input: any query value or body can be refused), 401 (no or bad credentials) and 403 (a role
without the permission); 404 when its path names something; 429 when it is throttled; and any
other error status a view declares with `error_response(...)` (409 on promote, say).
"""

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse

from core.api.errors import ErrorSerializer

DESCRIPTIONS = {
    "400": "Bad input: a body field or query parameter is refused (`errors` names it).",
    "401": "Not logged in, or a bad token.",
    "403": "Logged in, but the role lacks the permission.",
    "404": "Nothing with that id.",
    "409": "The current state refuses it.",
    "429": "Too many requests: wait `Retry-After` seconds.",
}


def error_response(description: str) -> OpenApiResponse:
    """An error status in a view's `@extend_schema(responses=...)`, with the one error body."""
    return OpenApiResponse(ErrorSerializer, description=description)


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema, adding the error responses every operation can give."""

    def _error_statuses(self) -> list[str]:
        statuses = ["400", "401", "403"]
        if "{" in self.path:
            statuses.append("404")
        if self.view.get_throttles():
            statuses.append("429")
        return statuses

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for status in self._error_statuses():
            if status not in responses:
                responses[status] = self._get_response_for_code(
                    error_response(DESCRIPTIONS[status]), status, direction=direction
                )
        return responses
