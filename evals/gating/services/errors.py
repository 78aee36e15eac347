"""What the gating services raise."""

from core.errors import DomainError


class GateCannotRun(DomainError):
    """The gate could not run at all (unknown gate, version or baseline; a broken configuration)."""

    code = "gate_cannot_run"


class GateConfigInvalid(DomainError, ValueError):
    """A golden set or gate definition is bad; the
    message names where (`gates[0].metrics[1].max`)."""

    code = "gate_config_invalid"
