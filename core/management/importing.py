"""What the import commands share: opening the file, a progress bar on a terminal, errors."""

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError
from tqdm import tqdm

from core.importing import ImportFailed

BAR_DELAY_S = 0.5  # a bar appears only when an import takes more than a moment


class Progress:
    """Progress bars on stderr when it is a terminal; silent otherwise (pipes, CI, tests)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bars: list[tqdm] = []

    def _bar(self, **kwargs) -> tqdm:
        bar = tqdm(
            file=self.stream, delay=BAR_DELAY_S, disable=not self.enabled, leave=False, **kwargs
        )
        self.bars.append(bar)
        return bar

    def lines(self, handle, total_bytes: int | None) -> Iterator[bytes]:
        """Yield the file's lines, advancing a byte-counting bar."""
        bar = self._bar(total=total_bytes, unit="B", unit_scale=True, desc="reading")
        pending = 0
        for line in handle:
            pending += len(line)
            if pending > 1 << 20:
                bar.update(pending)
                pending = 0
            yield line
        bar.update(pending)
        bar.close()

    def writer(self) -> Callable[[int, int], None]:
        """Return a callback for the services' write phase: progress(done, total)."""
        state: dict[str, tqdm] = {}

        def progress(done: int, total: int) -> None:
            bar = state.get("bar")
            if bar is None:
                bar = state["bar"] = self._bar(
                    total=total, unit=" rows", unit_scale=True, desc="writing"
                )
            bar.update(done - bar.n)

        return progress

    def close(self) -> None:
        for bar in self.bars:
            bar.close()


@contextmanager
def import_file(path: str, stream=None):
    """Yield (lines, progress callback) for a file (or
    `-` for stdin); turn failures into CommandError."""
    progress = Progress(stream)
    try:
        if path == "-":
            handle, size = sys.stdin.buffer, None
        else:
            try:
                handle = open(path, "rb")  # noqa: SIM115 (closed by `with handle` below)
            except OSError as exc:
                raise CommandError(f"{path}: cannot open: {exc.strerror}") from None
            size = os.fstat(handle.fileno()).st_size
        with handle:
            yield progress.lines(handle, size), progress.writer()
    except ImportFailed as exc:
        raise CommandError(f"nothing imported:\n{exc}") from None
    finally:
        progress.close()
