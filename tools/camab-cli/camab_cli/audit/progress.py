"""A dependency-free progress bar with records/s and ETA (stderr)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """``audit [#####.....] 50/100 records  3.1 rec/s  ETA 0:00:16``.

    Redraws in place on a terminal; elsewhere (logs, CI) prints a line at most every
    ``interval`` seconds. ``enabled=False`` prints nothing.
    """

    def __init__(
        self,
        total: int | None,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        interval: float = 10.0,
        label: str = "audit",
    ) -> None:
        self.total = total
        self.done = 0
        self.errors = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if not self.tty else 0.2
        self.label = label
        self.started = time.perf_counter()
        self._last_draw = 0.0

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def text(self) -> str:
        rate = self.rate
        parts = [self.label]
        if self.total:
            filled = int(20 * min(self.done / self.total, 1.0))
            parts.append(f"[{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total} records")
        else:
            parts.append(f"{self.done} records")
        parts.append(f"{rate:.2f} rec/s")
        if self.total and rate > 0:
            parts.append(f"ETA {_clock((self.total - self.done) / rate)}")
        if self.errors:
            parts.append(f"{self.errors} errors")
        return "  ".join(parts)

    def update(self, n: int = 1, *, error: bool = False) -> None:
        self.done += n
        self.errors += int(error)
        now = time.perf_counter()
        if now - self._last_draw >= self.interval or (self.total and self.done >= self.total):
            self._draw(now)

    def _draw(self, now: float) -> None:
        self._last_draw = now
        if not self.enabled:
            return
        end = "\r" if self.tty else "\n"
        self.stream.write(self.text() + end)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write(self.text() + "\n")
            self.stream.flush()


__all__ = ["Progress"]
