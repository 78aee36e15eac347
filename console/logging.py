"""Structured key=value log lines. Callers pass ids and counts in `extra`, never text."""

import json
import logging

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class KeyValueFormatter(logging.Formatter):
    """Formats a record as `ts level logger event key=value ...`."""

    def format(self, record: logging.LogRecord) -> str:
        fields = {k: v for k, v in vars(record).items() if k not in _STANDARD}
        parts = [
            self.formatTime(record),
            record.levelname.lower(),
            record.name,
            record.getMessage(),
        ]
        parts += [f"{k}={json.dumps(v, default=str)}" for k, v in sorted(fields.items())]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line
