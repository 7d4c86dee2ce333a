"""The command line of the cycles plugin: ``--cycles``, ``--cycles-report``, ``tessera cycles list``
and ``tessera cycles calibrate``.

``--cycles MODEL`` is named like the configuration key ``cycles`` the plugin declares,
so the core turns it into ``--set cycles=MODEL`` before the machine is built (the
model owns the clock from the first instruction).  ``--cycles-report`` prints where
the time went when the run ends (a table on stderr), or writes it as JSON to a file.
"""

from __future__ import annotations

import json
import os
import sys
import weakref
from typing import Any

import click

from tessera.errors import ConfigError

#: machine -> where --cycles-report goes ("-": a table on stderr)
REPORTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def options() -> list[click.Option]:
    """Fresh option objects (the CLI adds them to both ``run`` and ``resume``)."""
    from tessera_cycles.models import MODELS

    return [
        click.Option(["--cycles", "cycles"], default=None, metavar="MODEL",
                     help=f"Run with a cycle model that owns the clock: {', '.join(('auto', *MODELS))} "
                          "(= --set cycles=MODEL; parameters with --set cycles.NAME=V; `tessera cycles list`)."),
        click.Option(["--cycles-report", "cycles_report"], is_flag=False, flag_value="-", default=None,
                     metavar="[FILE]", help="When the run ends, say where the time went: a table on stderr, "
                                            "or JSON written to FILE."),
        click.Option(["--cycles-trace", "cycles_trace"], default=None, metavar="FILE",
                     help="Write the model's timeline to FILE in model cycles (Perfetto JSON): tensix — each unit's "
                          "busy spans, FIFO occupancy and IPC counters; tile — each engine's operations, the harts' "
                          "tile stalls, queue and IPC counters (for both, a .vcd file: a value change dump); "
                          "inorder, barrel — IPC, cache-miss and misprediction counters per hart / core."),
    ]


#: machine -> where --cycles-trace goes
TRACES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
#: the models --cycles-trace can draw
TIMELINES = ("tensix", "tile", "inorder", "barrel")


def _writable(option: str, path: str) -> None:
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path}: it is a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ConfigError(f"{option} {path}: directory {parent} does not exist")


def configure(machine: Any, values: dict[str, Any]) -> None:
    """Check ``--cycles-report`` and ``--cycles-trace`` (``tessera_run_configure``)."""
    from tessera_cycles.live import model_of

    model = model_of(machine)
    path = values.get("cycles_report")
    if path is not None:
        if model is None:
            raise ConfigError("--cycles-report needs a cycle model (--cycles MODEL)")
        if path != "-":
            _writable("--cycles-report", path)
        REPORTS[machine] = path
    trace = values.get("cycles_trace")
    if trace is not None:
        name = getattr(model, "name", None)
        if name not in TIMELINES:
            raise ConfigError("--cycles-trace needs the tensix, tile, inorder or barrel cycle model (--cycles MODEL)"
                              f"{'' if name is None else f'; the {name} model has no timeline yet'}")
        _writable("--cycles-trace", trace)
        if name in ("inorder", "barrel"):
            if trace.lower().endswith(".vcd"):
                raise ConfigError(f"--cycles-trace {trace}: the {name} model's counters are written as Perfetto "
                                  "JSON only")
            from tessera_cycles.timeline import Samples

            model.samples = Samples()
            TRACES[machine] = trace
            return
        if trace.lower().endswith(".vcd"):
            import importlib.util

            if importlib.util.find_spec("vcd") is None:
                raise ConfigError(f"--cycles-trace {trace}: VCD output needs pyvcd "
                                  "(pip install 'tessera-cycles[vcd]')")
        if name == "tile":
            from tessera_cycles.tile_model import TileTimeline
            from tessera_cycles.timeline import Samples

            model.times.timeline = TileTimeline()
            if not trace.lower().endswith(".vcd"):     # the dump has no IPC signals: nothing to sample
                model.samples = Samples()
            TRACES[machine] = trace
            return
        from tessera_cycles.tensix_model import Timeline

        model.tile.timeline = Timeline()
        TRACES[machine] = trace


def name_of(model: Any) -> str:
    return str(getattr(model, "name", ""))


def write_report(machine: Any) -> None:
    """Print or write the report and the timeline asked for (``tessera_run_finished``)."""
    trace = TRACES.get(machine)
    if trace is not None:
        from tessera_cycles.live import model_of
        from tessera_cycles.timeline import write

        model = model_of(machine)
        if name_of(model) == "tile" and model.times.timeline is not None:
            from tessera_cycles import tile_timeline

            try:
                tile_timeline.write(model.times.timeline, model.samples, model.times.harts, trace)
            except OSError as exc:
                raise ConfigError(f"cannot write {trace}: {exc.strerror or exc}") from None
        elif model is not None and getattr(model, "samples", None) is not None:
            from tessera_cycles.timeline import write_samples

            if name_of(model) == "inorder":
                pipelines = model.pipelines
            else:                      # the barrel core: its threads' last retirements first
                model.flush(machine)
                pipelines = {"core": model.pipeline}
            try:
                write_samples(model.samples, pipelines, trace)
            except OSError as exc:
                raise ConfigError(f"cannot write {trace}: {exc.strerror or exc}") from None
        elif model is not None and getattr(model, "tile", None) is not None and model.tile.timeline is not None:
            try:
                write(model.tile.timeline, trace)
            except OSError as exc:
                raise ConfigError(f"cannot write {trace}: {exc.strerror or exc}") from None
    path = REPORTS.get(machine)
    if path is None:
        return
    from tessera_cycles import report as make  # the function (tables.py renders it)
    from tessera_cycles.tables import render, write_json

    rep = make(machine)
    if rep is None:
        return
    if path != "-":
        try:
            write_json(rep, path)
        except OSError as exc:
            raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
        return
    from rich.console import Console

    console = Console(file=sys.stderr)
    for part in render(rep):
        console.print(part)


@click.group("cycles")
def cycles() -> None:
    """Cycle models: which exist, what they model, their parameters (docs/cycles.md)."""


@cycles.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the models as JSON.")
def list_models(as_json: bool) -> None:
    """The cycle models, the architectures they apply to and their parameters (--set cycles.NAME=V)."""
    from tessera_cycles.models import MODELS, info

    models = [info(name) for name in MODELS]
    if as_json:
        click.echo(json.dumps([{"name": m.name, "doc": m.doc, "applies_to": m.applies_text,
                                "params": [{"name": f"cycles.{p}", "default": d, "doc": t} for p, d, t in m.params]}
                               for m in models], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for m in models:
        table = Table(title=f"{m.name}: {m.doc}\napplies to {m.applies_text}; --cycles {m.name}",
                      title_justify="left")
        table.add_column("parameter")
        table.add_column("default", justify="right")
        table.add_column("meaning")
        for p, d, t in m.params:
            table.add_row(f"cycles.{p}", str(d).lower() if isinstance(d, bool) else str(d), t)
        console.print(table)


@cycles.command("calibrate")
@click.option("--suite", "suites", multiple=True, metavar="SUITE",
              help="Only this probe suite (repeatable): tensix-a, tensix-b, riscv-r, riscv-t, riscv-c, riscv-f, "
                   "riscv-g, riscv-q, riscv-s (default: all).")
@click.option("--base", "base_blocks", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Loop counts N, 2N, 3N, 4N per point (default: the silicon runs' own, 32; smaller is faster).")
@click.option("--set", "params", multiple=True, metavar="cycles.NAME=V",
              help="A tensix model parameter for the runs (repeatable), to see what it changes.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="How to print the comparison.")
@click.option("--check", is_flag=True, help="Fail (a check failure, exit status 79) when a tracked point is outside 10 %.")
def calibrate(suites: tuple[str, ...], base_blocks: int | None, params: tuple[str, ...], fmt: str,
              check: bool) -> None:
    """Run the Blackhole silicon benchmarks as Tessera programs under the tensix model and
    compare each measured point with silicon: configuration, silicon, Tessera, error
    (docs/cycles.md "Calibration against silicon")."""
    from tessera.settings import guess_value
    from tessera_cycles import calibration, probes

    unknown = [s for s in suites if s not in probes.SUITES]
    if unknown:
        raise click.BadParameter(f"unknown suite {unknown[0]!r} (choose from {', '.join(probes.SUITES)})",
                                 param_hint="--suite")
    config: dict[str, Any] = {"cycles": "tensix"}
    for item in params:
        name, eq, value = item.partition("=")
        if not eq or not name.startswith("cycles.") or not value.strip():
            raise click.BadParameter(f"{item!r}: expected cycles.NAME=VALUE", param_hint="--set")
        config[name] = guess_value(value.strip())     # 4, true/false, or text (l1_ports) as `tessera run` does
    rows = calibration.compare(config, suites or None, base_blocks=base_blocks)
    if fmt == "json":
        click.echo(calibration.as_json(rows))
    elif fmt == "markdown":
        click.echo(calibration.markdown(rows), nl=False)
    else:
        _calibration_table(rows)
    tracked = [r for r in rows if r.tracked and r.within is not None]
    misses = [r for r in tracked if not r.within]
    if check and misses:
        from tessera.errors import CheckFailed

        worst = max(misses, key=lambda r: abs(r.error_pct or 0.0))
        raise CheckFailed(f"{len(misses)} of {len(tracked)} tracked points are outside {calibration.TOLERANCE:g} % "
                          f"of silicon (worst: {worst.label} {worst.variant}, {worst.error_pct:+.1f} %)")


def _calibration_table(rows: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    from tessera_cycles.calibration import TOLERANCE

    table = Table(title="the tensix model against Blackhole silicon (cycles per instruction)", title_justify="left")
    for col in ("dataset", "probe", "unit", "variant", "silicon", "Tessera", "error %", "within"):
        table.add_column(col, justify="right" if col in ("silicon", "Tessera", "error %") else "left")
    for r in rows:
        within = "-" if r.within is None or not r.tracked else ("yes" if r.within else "NO")
        if not r.tracked:
            within = "untracked"
        table.add_row(r.dataset.removesuffix(".csv").removesuffix("-blackhole"), r.label, r.unit, r.variant, f"{r.silicon:.3f}",
                      "-" if r.tessera is None else f"{r.tessera:.3f}",
                      "-" if r.error_pct is None else f"{r.error_pct:+.1f}", within)
    console = Console()
    console.print(table)
    tracked = [r for r in rows if r.tracked and r.within is not None]
    console.print(f"{sum(1 for r in tracked if r.within)} of {len(tracked)} tracked points within {TOLERANCE:g} % "
                  "of silicon; untracked points say why in --format markdown/json")
