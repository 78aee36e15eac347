"""Reads of agents, agent versions and transcripts, and the one reading of an agent version's
name (filtered lists of calls and verdicts are evals.judging.selectors.browse's, shared with the
pages)."""

from django.db.models import BooleanField, Count, ExpressionWrapper, Prefetch, Q, QuerySet

from core.data_versions import figures_cached
from core.errors import DomainError
from evals.catalog.models import AgentVersion, Transcript, Turn


class AgentVersionUnknown(DomainError):
    """A name that gives no agent version, or the versions of several agents."""

    code = "unknown_agent_version"


def agent_version_resolve(
    text: str, *, what: str = "agent_version", agent: str = ""
) -> AgentVersion:
    """Return the agent version `text` names: `AGENT:VERSION`, or `VERSION` (of `agent` when given).

    The one reading of an agent version's name for every page, command and API call: a VERSION
    that several agents have is refused (write AGENT:VERSION), as is a name that gives none; the
    error names the field (`what`).
    """
    name, _, version = (text or "").strip().rpartition(":")
    name, agent = name.strip(), (agent or "").strip()
    if not version.strip():
        raise AgentVersionUnknown("give VERSION or AGENT:VERSION", field=what)
    if name and agent and name != agent:
        raise AgentVersionUnknown(f"{text!r} is a version of {name}, not of {agent}", field=what)
    qs = AgentVersion.objects.select_related("agent").filter(version=version.strip())
    if name or agent:
        qs = qs.filter(agent__name=name or agent)
    found = list(qs.order_by("agent__name")[:2])
    if not found:
        raise AgentVersionUnknown(f"no agent version {text!r}", field=what)
    if len(found) > 1:
        raise AgentVersionUnknown(
            f"{text!r} names versions of several agents ({found[0].agent.name}, "
            f"{found[1].agent.name}); write AGENT:VERSION",
            field=what,
        )
    return found[0]


def transcript_with_turns() -> QuerySet[Transcript]:
    """Return transcripts with their turns prefetched in order (for one transcript's detail)."""
    return Transcript.objects.select_related("agent_version__agent").prefetch_related(
        Prefetch("turns", queryset=Turn.objects.order_by("index"))
    )


def agent_version_calls() -> dict[int, int]:
    """Return agent version pk -> how many calls it has, kept while no call changes
    (core.data_versions): counting them costs a scan of every call's agent version."""
    return figures_cached(
        "agent-version-calls",
        lambda: dict(
            Transcript.objects.values("agent_version")
            .annotate(n=Count("id"))
            .values_list("agent_version", "n")
            .order_by()
        ),
        reads=("calls",),
    )


def _with_calls(versions: list[AgentVersion]) -> list[AgentVersion]:
    calls = agent_version_calls()
    for av in versions:
        av.calls = calls.get(av.pk, 0)
    return versions


def agent_versions_listed() -> list[AgentVersion]:
    """Return every agent version with its agent and call count, newest version first per agent."""
    return _with_calls(
        list(
            AgentVersion.objects.select_related("agent")
            .defer("instructions", "tools")
            .annotate(
                has_instructions=ExpressionWrapper(
                    ~Q(instructions=""), output_field=BooleanField()
                ),
            )
            .order_by("agent__name", "-version")
        )
    )


def agent_version_found(agent: str, version: str) -> AgentVersion | None:
    """Return one agent version with its scope and call count, or None."""
    av = (
        AgentVersion.objects.select_related("agent")
        .filter(agent__name=agent, version=version)
        .first()
    )
    return _with_calls([av])[0] if av else None
