"""The rule workbench's judged side: rule drafts, judged on chosen calls by the judge runner, and
their verdicts, kept apart from every released version's."""
