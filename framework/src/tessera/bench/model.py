"""The records every benchmark workload shares: samples, variants, skips, failures, workloads.

A *workload* prepares a list of *variants*; the runner (``tessera.bench.runner``)
runs every variant of every workload once per round, interleaved, for ``--repeat``
rounds and keeps each variant's best :class:`Sample`.  Only ratios measured in the
same process run are compared, so machine noise largely cancels out.

Workloads are contributions: each architecture or tool plugin offers its own through
the ``tessera_bench_workloads`` hook (docs/hooks.md), as :class:`Workload` subclasses
that say everything the core needs to run, check, order and report them — their
name, their place in the report, their targets, how the text report phrases their
numbers.  The core offers only workloads that name no architecture (``startup``).

Two exceptions steer the runner: :class:`Skip` means "cannot be measured here"
(a plugin or peer is missing: a one-line note, not an error), and
:class:`BenchFailure` means "measured, but the result was wrong" — that must never
be mistaken for a speed, so it fails the whole command (exit status 1).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

import attrs

from tessera.bench.targets import Target


class Skip(Exception):  # a signal, not an error
    """This workload (or variant) cannot run here; the message is the one-line note."""


class BenchFailure(Exception):
    """A workload computed a wrong result, or its run ended in an error."""


@attrs.define
class Sample:
    """One timed run: ``count`` units of work (instructions, usually) in ``seconds``.

    ``extra`` carries what the variant wants reported beside the time (e.g. the
    bytes a tracer wrote).
    """

    seconds: float
    count: int
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def rate(self) -> float:
        """Units per second (instructions per second for the instruction workloads)."""
        return self.count / self.seconds if self.seconds > 0 else float("inf")


@attrs.define
class Variant:
    """One named way to run a workload; ``run()`` builds, times and checks one sample.

    ``run`` must do its setup (building the machine, loading the program) outside
    the timed section, time only the execution, and raise :class:`BenchFailure`
    when the result is wrong.
    """

    name: str
    run: Callable[[], Sample]
    description: str = ""


@attrs.frozen
class CommandRun:
    """A ``tessera`` command line the core's ``startup`` workload times as a whole process.

    Plugins offer these through :meth:`Workload.startup_commands` so that start-up is
    measured up to *their* programs without the core naming an architecture.  ``args``
    come after ``tessera``; the command must exit 0 and print ``expect_out``.  ``size``
    is merged into the ``startup`` entry's ``size`` (e.g. the program's iterations).
    """

    name: str
    args: tuple[str, ...]
    description: str
    expect_out: str = ""
    size: dict[str, Any] = attrs.field(factory=dict)


class Program(Protocol):
    """A checked program another workload runs under hosts of its own choosing.

    :meth:`Workload.program_for` returns one, :meth:`Context.program` finds it by workload
    name: a tool plugin's workload runs an architecture plugin's program this way,
    without importing that plugin (docs/performance.md names the repository's).
    """

    #: the work the program does (``size["iterations"]`` of the workload running it)
    iterations: int
    #: ``(plugin object, plugin name)`` of the architecture, for :func:`tessera.bench.hosts.minimal_host`
    plugin: tuple[Any, str]

    @property
    def check(self) -> dict[str, Any]:
        """What every sample's result is checked against (the entry's ``check``)."""

    def machine(self, host: Any, engine: str | None = None, config: dict[str, Any] | None = None) -> Any:
        """A fresh machine under ``host`` with the program loaded, nothing run yet; ``config``
        adds configuration keys (a tool's, declared with ``tessera_tool_settings``: a cycle model)."""

    def run(self, machine: Any) -> Sample:
        """Time the run of a machine from :meth:`machine` and check its result."""


@attrs.define
class Context:
    """What workloads get from the command: the plugin host, the size factor, the workloads.

    ``host`` is the host the ``tessera`` command built (so ``--no-plugin`` and
    ``TESSERA_DISABLE_PLUGINS`` apply); workloads use it to find architectures and
    their plugins, then build their own minimal hosts (``tessera.bench.hosts``).
    ``workloads`` maps the name of every workload offered to this run — selected or
    not — to its class, in report order.
    """

    host: Any
    scale: float = 1.0
    quick: bool = False
    workloads: dict[str, type[Workload]] = attrs.field(factory=dict)

    def size(self, default: int, minimum: int = 1, quick: int | None = None) -> int:
        """``default`` scaled by ``--scale`` (``--quick``), at least ``minimum``.

        With ``--quick``, also at least ``quick``: enough work that what is measured is
        still the steady state (the fast engine translates hot code first, which a
        too-short run would mostly measure instead).
        """
        n = max(minimum, round(default * self.scale))
        return max(n, quick) if self.quick and quick is not None else n

    def program(self, workload: str, iterations: int) -> Program:
        """The program of the offered workload ``workload``, sized ``iterations``.

        :class:`Skip` when no enabled plugin offers that workload (the note says which
        one was wanted), or when its architecture is not available.
        """
        cls = self.workloads.get(workload)
        if cls is None:
            raise Skip(f"workload {workload!r}, whose program this one runs, is not offered by any "
                       "enabled plugin")
        return cls.program_for(self, iterations)


class Workload:
    """One benchmark: a program, the variants it runs in, and how its result is checked.

    Subclasses set the class attributes and implement :meth:`prepare` (find the
    plugin, build the program, return the variants — or raise :class:`Skip`) and,
    when they report more than rates, :meth:`derive`.  After ``prepare``,
    ``self.size`` describes the work (JSON-able) and ``self.check`` says what every
    sample's result is checked against.  Importing a workload's module must stay
    cheap (``tessera bench --help`` lists the names): heavy imports go in ``prepare``.
    """

    name: str = ""
    title: str = ""
    #: what ``Sample.count`` counts
    unit: str = "instructions"
    #: an instruction-set workload: run on both engines and compared with the peer
    #: (``vs_riscemu`` in the report)
    scalar: bool = False
    #: samples of each variant per round (each checked, the best kept): more for
    #: workloads whose samples take milliseconds, where one hiccup of the machine
    #: would otherwise decide a ratio
    samples_per_round: int = 1
    #: place in the run and the report: lower first, ties by name.  The plugins of
    #: this repository use 10-60 (docs/performance.md); the core's ``startup`` is last
    #: (1000)
    order: int = 100
    #: the speed targets this workload's numbers are held to (``targets`` in the report)
    targets: ClassVar[tuple[Target, ...]] = ()
    #: how the text report shows a rate: ``"rate"`` (millions of units per second),
    #: ``"ns"`` (nanoseconds per unit), ``"ms"`` (milliseconds per unit)
    rate_style: str = "rate"

    def __init__(self) -> None:
        self.size: dict[str, Any] = {}
        self.check: dict[str, Any] = {}

    def prepare(self, ctx: Context) -> list[Variant]:
        raise NotImplementedError

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        """Numbers computed from the best samples (ratios, overheads); ``{}`` by default."""
        return {}

    def close(self) -> None:
        """Release what ``prepare`` made (temporary files); called once, whatever happened."""

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        """What the text report's ``compared`` column says of ``variant`` beyond the
        generic ratios (peer, fast/step), from the entry's ``derived`` numbers."""
        return []

    @classmethod
    def program_for(cls, ctx: Context, iterations: int) -> Program:
        """This workload's program for other workloads to run (see :class:`Program`)."""
        raise Skip(f"workload {cls.name!r} offers no program to other workloads")

    @classmethod
    def startup_commands(cls, ctx: Context, directory: Path) -> list[CommandRun]:
        """Commands the ``startup`` workload times (files they need go in ``directory``).

        Raise :class:`Skip` (or return ``[]``) when there is nothing to offer here.
        """
        return []


__all__ = ["BenchFailure", "CommandRun", "Context", "Program", "Sample", "Skip", "Variant", "Workload"]
