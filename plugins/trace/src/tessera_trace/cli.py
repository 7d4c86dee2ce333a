"""The ``tessera run``/``resume`` options of the trace plugin, and their checking.

Formats are a ``click.Choice`` (a typo is a usage error, exit 2); everything that
depends on the machine — paths, filters — is checked in :func:`configure`, which the
CLI calls after loading the program and before the run, so a bad value is one line
and exit status 64 and the program never starts.
"""

from __future__ import annotations

import os
from typing import Any

import click

from tessera.cli.params import SIZE
from tessera.errors import ConfigError
from tessera_trace.formats import FORMATS
from tessera_trace.formats.profile import DEFAULT_TOP
from tessera_trace.output import DEFAULT_LIMIT
from tessera_trace.tracer import Tracer

#: option parameter name -> the option as the user writes it (for messages)
FILTERS = {
    "trace_out": "--trace-out",
    "trace_pc": "--trace-pc",
    "trace_agent": "--trace-agent",
    "trace_window": "--trace-window",
    "trace_limit": "--trace-limit",
    "trace_top": "--trace-top",
}


def options() -> list[click.Option]:
    """Fresh option objects (the CLI adds them to both ``run`` and ``resume``)."""
    defaults = ", ".join(f"{name}: {cls.default_out}" for name, cls in FORMATS.items())
    return [
        click.Option(["--trace", "trace"], type=click.Choice(list(FORMATS)), multiple=True,
                     help="Trace the run: text (commit log), jsonl, perfetto (ui.perfetto.dev) or "
                          "profile (hot spots). Repeatable, with one --trace-out each, in order."),
        click.Option(["--trace-out", "trace_out"], multiple=True, metavar="FILE",
                     help=f"Where the trace goes ('-' = stdout). Default per format: {defaults}."),
        click.Option(["--trace-pc", "trace_pc"], default=None, metavar="START:END",
                     help="Trace only instructions at addresses in [START, END) (numbers or symbols)."),
        click.Option(["--trace-agent", "trace_agent"], multiple=True, metavar="NAME",
                     help="Trace only this agent (repeatable)."),
        click.Option(["--trace-window", "trace_window"], default=None, metavar="FIRST:LAST",
                     help="Keep only records FIRST..LAST-1 of the (filtered) retirement stream."),
        click.Option(["--trace-limit", "trace_limit"], type=SIZE, default=None, metavar="SIZE",
                     help="Stop writing the trace at this size, with a note (default 1G)."),
        click.Option(["--trace-top", "trace_top"], type=click.IntRange(min=1), default=None, metavar="N",
                     help=f"PCs the profile lists (default {DEFAULT_TOP})."),
    ]


def check_writable(path: str) -> None:
    """Refuse, before anything is opened, a path that cannot be written."""
    if path == "-":
        return
    if os.path.isdir(path):
        raise ConfigError(f"--trace-out {path}: it is a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ConfigError(f"--trace-out {path}: directory {parent} does not exist")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise ConfigError(f"--trace-out {path}: permission denied")
    elif not os.access(parent, os.W_OK):
        raise ConfigError(f"--trace-out {path}: permission denied (directory {parent})")


def configure(machine: Any, values: dict[str, Any]) -> list[Tracer]:
    """Attach the tracers the command line asks for (``tessera_run_configure``)."""
    formats = tuple(values.get("trace") or ())
    given = [flag for name, flag in FILTERS.items() if values.get(name) not in (None, (), [])]
    if not formats:
        if given:
            raise ConfigError(f"{given[0]} needs --trace FORMAT")
        return []
    outs = list(values.get("trace_out") or ())
    if len(outs) > len(formats):
        raise ConfigError(f"{len(outs)} --trace-out for {len(formats)} --trace: give one per format, in order")
    if values.get("trace_top") is not None and "profile" not in formats:
        raise ConfigError("--trace-top needs --trace profile")
    paths = outs + [FORMATS[fmt].default_out for fmt in formats[len(outs):]]
    seen: dict[str, str] = {}
    for fmt, path in zip(formats, paths):
        key = path if path == "-" else os.path.realpath(path)
        if key in seen:
            raise ConfigError(f"--trace {seen[key]} and --trace {fmt} both write {path}: "
                              "give each its own --trace-out")
        seen[key] = fmt
        check_writable(path)
    tracers: list[Tracer] = []
    try:
        for fmt, path in zip(formats, paths):
            tracers.append(Tracer(machine, fmt, path, pc=values.get("trace_pc"),
                                  agents=tuple(values.get("trace_agent") or ()),
                                  window=values.get("trace_window"),
                                  limit=int(values.get("trace_limit") or DEFAULT_LIMIT),
                                  top=int(values.get("trace_top") or DEFAULT_TOP), autoclose="run"))
    except BaseException:
        for tracer in tracers:
            tracer.close()
        raise
    return tracers
