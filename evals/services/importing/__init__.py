"""Importers for rules, transcripts and verdicts:
validate everything, then write in one transaction.

The management commands, the API and the demo loader all call these.
"""

from .common import ImportFailed, ImportResult, LineError
from .rules import rules_export, rules_import
from .transcripts import audio_url_clean, transcript_checksum, transcripts_import
from .verdicts import verdicts_import

__all__ = [
    "ImportFailed",
    "ImportResult",
    "LineError",
    "audio_url_clean",
    "rules_export",
    "rules_import",
    "transcript_checksum",
    "transcripts_import",
    "verdicts_import",
]
