"""Fixtures the evals tests share."""

import pytest


@pytest.fixture
def world(db):
    """Two agent versions, one call per golden scenario, three gated rules and a release gate."""
    from tests.evals.gating_helpers import World

    return World()
