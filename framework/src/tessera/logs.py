"""Structured logging (structlog) to stderr: human-readable or JSON lines.

``-v`` shows info, ``-vv`` debug; ``--log-format json`` gives one JSON object per
line for machines.  The CLI configures the output once (:func:`configure`).

Importing structlog costs about a tenth of a second (it pulls in rich and asyncio),
which is most of what ``tessera --version`` may take.  So this module does not
import it: the core logs through :func:`get_logger`, whose loggers import structlog
only when a message passes the configured level (by default warnings and errors).
Code that imports structlog itself (a plugin) still gets this configuration: the
first import of structlog, whoever makes it, applies it (:class:`_ApplyOnImport`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["get_logger", "Logger", "configure", "enabled", "collect", "plain", "DEBUG", "INFO", "WARNING",
           "ERROR"]

DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40  # the standard library's levels
_LEVELS = {"debug": DEBUG, "info": INFO, "warning": WARNING, "error": ERROR}


class _Settings:
    """What :func:`configure` chose; structlog gets it when (or once) it is imported."""

    level = WARNING
    fmt = "console"
    hook: _ApplyOnImport | None = None


_settings = _Settings()


def _stderr_logger(*_args: object) -> Any:
    """A logger for whatever ``sys.stderr`` is *now*: callers (test runners, embedding
    applications, the CLI under a runner) may swap and close the stream that was
    current when :func:`configure` ran."""
    import structlog

    return structlog.PrintLogger(file=sys.stderr)


def _apply(final: Any = None) -> None:
    """Configure structlog from the settings; ``final`` replaces the renderer (see :func:`collect`)."""
    import structlog

    if final is None:
        if _settings.fmt == "json":
            final = structlog.processors.JSONRenderer(sort_keys=True)
        else:
            final = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        processors = [structlog.contextvars.merge_contextvars, structlog.processors.add_log_level,
                      structlog.processors.TimeStamper(fmt="iso", utc=True), final]
    else:
        processors = [structlog.contextvars.merge_contextvars, structlog.processors.add_log_level, final]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_settings.level),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


class _ApplyOnImport:
    """A one-shot import hook: when anyone imports structlog, configure it right after.

    Without it, a plugin that imports structlog itself after :func:`configure` ran
    would log with structlog's defaults (every level, to stdout).
    """

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "structlog":
            return None
        self.remove()
        from importlib.util import find_spec

        spec = find_spec(fullname)  # the finders after this one
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            _apply()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        if _settings.hook is self:
            _settings.hook = None


def configure(verbosity: int = 0, fmt: str = "console") -> None:
    """Warnings and errors (0), also info (1) or also debug (2+), as console lines or JSON."""
    _settings.level = {0: WARNING, 1: INFO}.get(verbosity, DEBUG)
    _settings.fmt = fmt
    if "structlog" in sys.modules:
        _apply()
    elif _settings.hook is None:
        _settings.hook = _ApplyOnImport()
        sys.meta_path.insert(0, _settings.hook)


def enabled(level: int) -> bool:
    return level >= _settings.level


class Logger:
    """A named logger with structlog's calling convention (``log.warning("event", key=value)``).

    A message below the configured level costs one comparison and imports nothing.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def _log(self, method: str, event: str, fields: dict[str, Any]) -> None:
        if _LEVELS[method] < _settings.level:
            return
        import structlog  # configured on import (see _ApplyOnImport)

        getattr(structlog.get_logger(self.name), method)(event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self._log("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log("error", event, fields)


def get_logger(name: str) -> Logger:
    """The logger library code and plugins use (``tessera.logs.get_logger("tessera.x")``)."""
    return Logger(name)


def plain(event: dict[str, Any]) -> str:
    """One log event as a plain line: ``event: detail``, or ``event key=value ...``."""
    fields = {k: v for k, v in event.items() if k not in ("event", "level", "log_level", "timestamp")}
    text = str(event.get("event", ""))
    if list(fields) == ["detail"]:
        return f"{text}: {fields['detail']}"
    return " ".join([text, *(f"{k}={v}" for k, v in fields.items())])


@contextlib.contextmanager
def collect() -> Iterator[list[dict[str, Any]]]:
    """Keep the log events of a block (at the configured level) instead of printing them.

    ``tessera demo`` shows what an example logs as part of that example's output.
    Not reentrant: the events of a nested block go to the innermost list only.
    """
    import structlog

    events: list[dict[str, Any]] = []

    def keep(_logger: Any, _method: str, event_dict: dict[str, Any]) -> Any:
        events.append(dict(event_dict))
        raise structlog.DropEvent

    _apply(final=keep)
    try:
        yield events
    finally:
        _apply()


# Quiet by default even when used as a library: warnings and errors only.
configure(0)
