"""An index for the calls list's order: newest first, calls without a start time last, then by id.

SQLite cannot index `DESC NULLS LAST`, so the index exists on PostgreSQL only (where 100,000 calls
live); SQLite sorts in memory, which is fine at its scale.
"""

from django.db import migrations

INDEX = "transcript_started_desc"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{INDEX}" ON "evals_transcript" '
            '("started_at" DESC NULLS LAST, "id" DESC)'
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX IF EXISTS "{INDEX}"')


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0004_drop_fk_indexes_covered_by_unique_keys"),
    ]

    operations = [migrations.RunPython(create, drop)]
