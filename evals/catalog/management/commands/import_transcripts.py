from django.core.management.base import BaseCommand

from core.management.importing import import_file
from evals.catalog.services.importing import transcripts_import


class Command(BaseCommand):
    help = (
        "Import transcripts: JSON Lines (.jsonl, .ndjson) or one JSON document (.json: one call, "
        "an array of calls, or a results document), in the native, OpenAI chat or trajectory "
        "shape or a trace format (tau-bench, tau2-bench, Vapi, Retell, ElevenLabs, OpenTelemetry "
        "OTLP/JSON). Other names and stdin are told apart by their content."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSONL or JSON array file, or - for stdin")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="overwrite transcripts whose turns changed (deletes their verdicts and marks)",
        )
        parser.add_argument("--agent", help="agent name for lines that do not give one")
        parser.add_argument("--agent-version", help="agent version for lines that do not give one")

    def handle(self, *args, file, replace, agent, agent_version, **options):
        suffix = file.lower().rsplit(".", 1)[-1] if "." in file else ""
        document = {"json": True, "jsonl": False, "ndjson": False}.get(suffix)
        with import_file(file) as (lines, progress):
            result = transcripts_import(
                lines=lines,
                document=document,
                source=file,
                replace=replace,
                agent=agent,
                agent_version=agent_version,
                progress=progress,
            )
        self.stdout.write(result.summary)
