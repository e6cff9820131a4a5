"""The one progress display of the ``camab`` command (``attribute``, ``demo``, ``audit``).

``audit [#####.....] 50/100 records  3.10 rec/s  ETA 0:00:16``: redrawn in place on a
terminal (at most every 0.2 s), a line at most every ``interval`` seconds elsewhere (logs,
CI); messages go to the same stream, clearing a live bar first; ``enabled=False`` shows
nothing. A task's total only grows: one that needed fewer steps than planned keeps its
total and says "stopped early" in words. Dependency-free.
"""

from __future__ import annotations

import sys
import time
from typing import IO


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """A progress bar over ``total`` steps of ``unit`` (``None``: a running count).

    Args:
        total: the number of steps, or ``None`` when unknown.
        label: what is shown first.
        unit: what a step is (``"records"``, ``"model calls"``).
        rate_unit: how the rate is written (``"rec/s"``).
        stream: where it draws (standard error by default).
        enabled: ``False`` draws nothing and prints no message.
        interval: seconds between lines when the stream is not a terminal.
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        label: str = "",
        unit: str = "records",
        rate_unit: str = "rec/s",
        stream: IO[str] | None = None,
        enabled: bool = True,
        interval: float = 10.0,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if not self.tty else 0.2
        self.unit = unit
        self.rate_unit = rate_unit
        self.start(label, total)

    def start(self, label: str, total: int | None) -> None:
        """Begin a new bar (the same object shows one task after another)."""
        self.label = label
        self.total = total
        self.done = 0
        self.errors = 0
        self.stopped_early = False
        """The task ended before its total (a run that needed fewer calls than planned)."""
        self.started = time.perf_counter()
        self._last_draw = 0.0

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def text(self) -> str:
        """The bar as one line."""
        rate = self.rate
        parts = [self.label]
        if self.total:
            filled = int(20 * min(self.done / self.total, 1.0))
            parts.append(
                f"[{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total} {self.unit}"
            )
        else:
            parts.append(f"{self.done} {self.unit}")
        parts.append(f"{rate:.2f} {self.rate_unit}")
        if self.stopped_early:
            parts.append("needed fewer")
        elif self.total and rate > 0 and self.done < self.total:
            parts.append(f"ETA {_clock((self.total - self.done) / rate)}")
        if self.errors:
            parts.append(f"{self.errors} errors")
        return "  ".join(parts)

    def update(self, n: int = 1, *, error: bool = False) -> None:
        """``n`` more steps done (``error``: one of them failed)."""
        self.show(self.done + n, self.total, error=error)

    def show(self, done: int, total: int | None, *, error: bool = False) -> None:
        """``done`` of ``total`` steps (the engine's ``progress(calls, total)`` hook); a
        total below ``done`` is raised to it, so the bar never overflows, and a total below
        the bar's (the engine's last report when a run needed fewer calls than it planned)
        leaves the bar's total as it was and marks it :attr:`stopped_early`, so the total
        a user reads never changes mid-task."""
        ended = total is not None and self.total is not None and total < self.total
        if ended:
            self.stopped_early, total = True, self.total
        self.done = done
        self.total = max(total, done) if total is not None else None
        self.errors += int(error)
        now = time.perf_counter()
        last = ended or bool(self.total and self.done >= self.total)
        if now - self._last_draw >= self.interval or last:
            self._draw(now)

    def message(self, text: str) -> None:
        """A line of its own, below the bar."""
        if self.enabled:
            self._clear()
            print(text, file=self.stream, flush=True)

    def finish(self, summary: str) -> None:
        """End the bar with ``label: summary in N s`` (and, for a task that stopped early,
        how many of the planned steps it needed)."""
        if self.stopped_early:
            summary += f" (of the {self.total} planned: subsets shared)"
        self.message(f"{self.label}: {summary} in {time.perf_counter() - self.started:.1f} s")

    def close(self) -> None:
        """Leave the last state of a live bar on its own line."""
        if self.enabled and self.tty:
            self.stream.write(self.text() + "\n")
            self.stream.flush()

    def _draw(self, now: float) -> None:
        self._last_draw = now
        if not self.enabled:
            return
        end = "\r" if self.tty else "\n"
        self.stream.write(self.text() + end)
        self.stream.flush()

    def _clear(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
