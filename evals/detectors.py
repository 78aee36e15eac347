"""Deterministic detectors: small pure functions over turns, registered by name.

The judge-runner work fills in the registry; importers call `detector_validate`.
"""
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Detector:
    name: str
    func: Callable[..., Any]
    params: dict[str, Any]  # parameter name -> default (None means required)
    doc: str = ""


DETECTORS: dict[str, Detector] = {}


def detector_validate(spec: Any) -> dict:
    """Return the detector spec with defaults filled in, or raise ValueError naming the field."""
    if not isinstance(spec, dict):
        raise ValueError("detector: must be a mapping with a name")
    name = spec.get("name")
    if name not in DETECTORS:
        known = ", ".join(sorted(DETECTORS)) or "none registered"
        raise ValueError(f"detector.name: unknown detector {name!r} (known: {known})")
    return dict(spec)
