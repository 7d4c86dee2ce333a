"""Structured logging (structlog) to stderr: human-readable or JSON lines.

``-v`` shows info, ``-vv`` debug; ``--log-format json`` gives one JSON object per
line for machines.  Library code only calls ``structlog.get_logger``; the CLI
configures the output once.
"""

from __future__ import annotations

import logging
import sys

import structlog


def _stderr_logger(*_args: object) -> structlog.PrintLogger:
    """A logger for whatever ``sys.stderr`` is *now*: callers (test runners, embedding
    applications, the CLI under a runner) may swap and close the stream that was
    current when :func:`configure` ran."""
    return structlog.PrintLogger(file=sys.stderr)


def configure(verbosity: int = 0, fmt: str = "console") -> None:
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    renderer: structlog.typing.Processor
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=True)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


# Quiet by default even when used as a library: warnings and errors only.
configure(0)
