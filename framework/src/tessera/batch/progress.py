"""The batch's progress bar: runs finished of runs to do, ETA, and a live count per outcome.

Shown on stderr only when it is a terminal (or when asked), like :mod:`tessera.progress`,
so piped and logged batches stay clean; rich is imported only when the bar is shown.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

__all__ = ["BatchProgress"]


class BatchProgress:
    """Context manager: ``advance(outcome)`` after each finished run; ``note(text)`` prints a
    line above the bar (or on stderr when there is no bar)."""

    def __init__(self, total: int, *, enabled: bool | None = None, skipped: int = 0,
                 quiet: bool = False, label: str = "batch") -> None:
        self.total = total
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.quiet = quiet
        self.skipped = skipped
        self.counts: Counter[str] = Counter()
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> BatchProgress:
        if self.enabled and self.total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn(f"[bold]{self.label}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TextColumn("ETA"),
                TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, counts=self._counts())
        return self

    def _counts(self) -> str:
        shown = ", ".join(f"{name} {n}" for name, n in sorted(self.counts.items()))
        done = f"{self.skipped} done before" if self.skipped else ""
        return " · ".join(part for part in (shown, done) if part)

    def advance(self, outcome: str) -> None:
        self.counts[outcome] += 1
        if self._progress is not None:
            self._progress.update(self._task, advance=1, counts=self._counts())

    def note(self, text: str) -> None:
        if self.quiet:
            return
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=sys.stderr, flush=True)

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
