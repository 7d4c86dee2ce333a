"""A progress display for long runs: steps executed and instructions per second.

Shown only when stderr is a terminal, and only once a run has gone on for a while,
so short runs and piped output stay clean.  The engine calls back every 65,536
steps, never per instruction.
"""

from __future__ import annotations

import sys
import time
from typing import Any


class RunProgress:
    """Context manager giving ``callback(steps)`` for ``Machine.run(progress=...)``."""

    def __init__(self, total: int | None, *, enabled: bool | None = None, delay: float = 0.5) -> None:
        self.total = total
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.delay = delay
        self._progress: Any = None
        self._task: Any = None
        self._t0 = 0.0

    def __enter__(self) -> RunProgress:
        self._t0 = time.perf_counter()
        return self

    def callback(self, steps: int) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self._t0
        if self._progress is None:
            if elapsed < self.delay:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("[bold]running"), BarColumn(),
                TextColumn("{task.completed:,} steps"), TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task("run", total=self.total, rate="")
        rate = steps / elapsed if elapsed > 0 else 0.0
        self._progress.update(self._task, completed=steps, rate=f"{rate / 1e6:.2f} M instr/s")

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()
