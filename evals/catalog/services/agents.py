"""An agent version's scope: its instructions (the system prompt) and the tools it may call.

The scope is what the runtime classifiers (scope drift) and the tool_selection judge measure
against, so there is exactly one copy of it, on the AgentVersion. The transcript importer,
the API and the `agent_scope` command all set it through `agent_version_scope_set`.
"""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from core.errors import Conflict, DomainError, NotFound
from evals.catalog.models import Agent, AgentVersion

MAX_INSTRUCTIONS = 100_000
MAX_TOOLS = 200
MAX_TOOL_DESCRIPTION = 4_000


class ScopeInvalid(DomainError):
    """An agent scope that cannot be stored: names the field (`agent_tools[2].name`)."""

    code = "invalid_scope"


@dataclass(frozen=True)
class AgentScope:
    instructions: str
    tools: list[dict]

    @property
    def empty(self) -> bool:
        return not self.instructions and not self.tools


def agent_instructions_clean(value: Any, *, field: str = "agent_instructions") -> str:
    """Return the instructions as a string, or raise ScopeInvalid naming `field`."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ScopeInvalid(f"must be a string, not {type(value).__name__}", field=field)
    if len(value) > MAX_INSTRUCTIONS:
        raise ScopeInvalid(f"longer than {MAX_INSTRUCTIONS:,} characters", field=field)
    return value


def agent_tools_clean(value: Any, *, field: str = "agent_tools") -> list[dict]:
    """Return the tools as `[{name, description, parameters}]`, sorted by nothing (kept in the
    order given). Accepts Docket's own shape and OpenAI's `{"type": "function", "function":
    {...}}`; raises ScopeInvalid naming the item and key that is wrong."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScopeInvalid("must be a list of tools", field=field)
    if len(value) > MAX_TOOLS:
        raise ScopeInvalid(f"{len(value)} tools, more than {MAX_TOOLS}", field=field)
    tools: list[dict] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if isinstance(item, dict) and item.get("type") == "function" and "function" in item:
            item = item["function"]
        if not isinstance(item, dict):
            raise ScopeInvalid("must be an object with name, description, parameters", field=where)
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ScopeInvalid("missing: every tool needs a name", field=f"{where}.name")
        if len(name) > 200:
            raise ScopeInvalid("longer than 200 characters", field=f"{where}.name")
        if name in seen:
            raise ScopeInvalid(f"{name!r} appears twice", field=f"{where}.name")
        seen.add(name)
        description = item.get("description") or ""
        if not isinstance(description, str):
            raise ScopeInvalid("must be a string", field=f"{where}.description")
        if len(description) > MAX_TOOL_DESCRIPTION:
            raise ScopeInvalid(
                f"longer than {MAX_TOOL_DESCRIPTION:,} characters", field=f"{where}.description"
            )
        parameters = item.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        if not isinstance(parameters, dict):
            raise ScopeInvalid("must be a JSON schema object", field=f"{where}.parameters")
        tools.append({"name": name, "description": description, "parameters": parameters})
    return tools


def agent_scope_clean(*, instructions: Any, tools: Any, prefix: str = "agent_") -> AgentScope:
    """Return a cleaned AgentScope; field names in errors carry `prefix` (`agent_tools[0]`)."""
    return AgentScope(
        instructions=agent_instructions_clean(instructions, field=f"{prefix}instructions"),
        tools=agent_tools_clean(tools, field=f"{prefix}tools"),
    )


def agent_scope_differs(av: AgentVersion, scope: AgentScope) -> bool:
    """Whether storing `scope` on `av` would change a scope it already has."""
    has = bool(av.instructions or av.tools)
    return has and (av.instructions != scope.instructions or av.tools != scope.tools)


@transaction.atomic
def agent_version_scope_set(
    *, agent: str, version: str, scope: AgentScope, replace: bool = False, create: bool = True
) -> tuple[AgentVersion, bool]:
    """Store the scope on an agent version; return it and whether anything changed.

    A version's scope is part of what was released, so changing a scope it already has is a
    Conflict unless `replace`. Setting the same scope again is a no-op.
    """
    try:
        agent_row = Agent.objects.get(name=agent)
    except Agent.DoesNotExist:
        if not create:
            raise NotFound(f"no agent {agent!r}", field="agent") from None
        agent_row = Agent.objects.create(name=agent)
    try:
        av = AgentVersion.objects.select_for_update().get(agent=agent_row, version=version)
    except AgentVersion.DoesNotExist:
        if not create:
            raise NotFound(f"no version {version!r} of {agent}", field="version") from None
        av = AgentVersion.objects.create(agent=agent_row, version=version)
    if av.instructions == scope.instructions and av.tools == scope.tools:
        return av, False
    if agent_scope_differs(av, scope) and not replace:
        raise Conflict(
            f"{agent} {version} already has other instructions or tools; a released version's "
            "scope does not change: import a new agent version, or replace to overwrite",
            field="agent_instructions",
        )
    av.instructions, av.tools = scope.instructions, scope.tools
    av.save(update_fields=["instructions", "tools"])
    return av, True
