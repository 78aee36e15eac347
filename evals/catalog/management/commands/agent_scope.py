from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core import parsing
from core.errors import DomainError
from evals.catalog.selectors import agent_version_found
from evals.catalog.services.agents import agent_scope_clean, agent_version_scope_set


class Command(BaseCommand):
    help = (
        "Show or set an agent version's scope: its instructions (the system prompt) and the "
        "tools it may call. Without --instructions/--tools it prints the scope."
    )

    def add_arguments(self, parser):
        parser.add_argument("agent")
        parser.add_argument("version")
        parser.add_argument("--instructions", metavar="FILE", help="a text file: the system prompt")
        parser.add_argument(
            "--tools",
            metavar="FILE",
            help="a YAML or JSON list of tools ({name, description, parameters}, or OpenAI's "
            "function shape)",
        )
        parser.add_argument(
            "--replace", action="store_true", help="overwrite a scope the version already has"
        )

    def handle(self, *args, agent, version, instructions, tools, replace, **options):
        if instructions is None and tools is None:
            av = agent_version_found(agent, version)
            if av is None:
                raise CommandError(f"no version {version!r} of agent {agent!r}")
            self.stdout.write(av.instructions or "(no instructions)")
            for tool in av.tools:
                self.stdout.write(f"- {tool['name']}: {tool['description']}")
            return
        current = agent_version_found(agent, version)
        text = (
            self._read(instructions) if instructions else (current.instructions if current else "")
        )
        tool_list = current.tools if current and tools is None else None
        if tools:
            try:
                tool_list, _ = parsing.yaml_document(self._read(tools))
            except parsing.ParseProblem as exc:
                raise CommandError(f"{tools}:{exc}") from None
        try:
            scope = agent_scope_clean(instructions=text, tools=tool_list, prefix="")
            av, changed = agent_version_scope_set(
                agent=agent, version=version, scope=scope, replace=replace
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        state = "set" if changed else "unchanged"
        self.stdout.write(f"{av}: scope {state} ({len(av.tools)} tools)")

    def _read(self, path: str) -> str:
        try:
            return Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: {exc}") from None
