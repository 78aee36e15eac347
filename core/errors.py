"""The errors services raise when they refuse: one base class with an HTTP status and a code.

The API's one exception handler (core.api.errors) turns any of them into the one error body;
pages show `str(error)`, or `error.message` beside the form field `error.field`.
"""


class DomainError(Exception):
    """A service refused its input or the state it found; says what and, when known, where."""

    status: int = 400
    code: str = "invalid"

    def __init__(
        self, message: str = "", *, field: str | None = None, errors: dict[str, str] | None = None
    ):
        # `errors`: several fields refused at once ({field: message}), as a form shows them.
        self.field_errors = dict(errors or {})
        if self.field_errors and not message:
            if len(self.field_errors) == 1:
                field, message = next(iter(self.field_errors.items()))
            else:
                message = "; ".join(f"{f}: {m}" for f, m in self.field_errors.items())
        self.message = message
        self.field = field
        if field and not self.field_errors:
            self.field_errors = {field: message}
        super().__init__(f"{field}: {message}" if field else message)

    def field_messages(self) -> dict[str | None, str]:
        """{field: message} for a form to show each beside its field (None: the whole form)."""
        return self.field_errors or {None: self.message or str(self)}

    @property
    def detail(self) -> str:
        """One line for the error body's `detail`."""
        return str(self).split("\n", 1)[0]

    def error_items(self) -> list[dict]:
        """The error body's `errors`: one item per problem, each with `message` and where."""
        if len(self.field_errors) > 1:
            return [
                {"message": m, "field": f, "code": self.code} for f, m in self.field_errors.items()
            ]
        item: dict = {"message": self.message or str(self)}
        if self.field:
            item["field"] = self.field
        item["code"] = self.code
        return [item]


class NotFound(DomainError):
    """A service was asked for something that does not exist."""

    status = 404
    code = "not_found"


class Conflict(DomainError):
    """The request is well formed but the current state refuses it."""

    status = 409
    code = "conflict"
