"""Reads for the runtime classifiers."""

from evals.catalog.models import AgentVersion


def agent_scope(agent: str, version: str) -> tuple[str, list]:
    """Return (instructions, tools) of an agent version; empty when there is no such version."""
    if not agent or not version:
        return "", []
    row = (
        AgentVersion.objects.filter(agent__name=agent, version=version)
        .values_list("instructions", "tools")
        .first()
    )
    return (row[0] or "", row[1] or []) if row else ("", [])
