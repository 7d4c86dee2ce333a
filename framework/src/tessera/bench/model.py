"""The records every benchmark workload shares: samples, variants, skips and failures.

A *workload* (one module each: ``phoenix``, ``rv32``, ``peer``, ``sfpu``, ``hooks``,
``tracing``) prepares a list of *variants*; the runner (``tessera.bench.runner``)
runs every variant of every workload once per round, interleaved, for ``--repeat``
rounds and keeps each variant's best :class:`Sample`.  Only ratios measured in the
same process run are compared, so machine noise largely cancels out.

Two exceptions steer the runner: :class:`Skip` means "cannot be measured here"
(a plugin or peer is missing: a one-line note, not an error), and
:class:`BenchFailure` means "measured, but the result was wrong" — that must never
be mistaken for a speed, so it fails the whole command (exit status 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


class Skip(Exception):  # noqa: N818 - a signal, not an error
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


@attrs.define
class Context:
    """What workloads get from the command: the CLI's plugin host and the size factor.

    ``host`` is the host the ``tessera`` command built (so ``--no-plugin`` and
    ``TESSERA_DISABLE_PLUGINS`` apply); workloads use it to find architectures and
    their plugins, then build their own minimal hosts (``tessera.bench.hosts``).
    """

    host: Any
    scale: float = 1.0
    quick: bool = False

    def size(self, default: int, minimum: int = 1, quick: int | None = None) -> int:
        """``default`` scaled by ``--scale`` (``--quick``), at least ``minimum``.

        With ``--quick``, also at least ``quick``: enough work that what is measured is
        still the steady state (the fast engine translates hot code first, which a
        too-short run would mostly measure instead).
        """
        n = max(minimum, round(default * self.scale))
        return max(n, quick) if self.quick and quick is not None else n


class Workload:
    """One benchmark: a program, the variants it runs in, and how its result is checked.

    Subclasses set the class attributes and implement :meth:`prepare` (find the
    plugin, build the program, return the variants — or raise :class:`Skip`) and,
    when they report more than rates, :meth:`derive`.  After ``prepare``,
    ``self.size`` describes the work (JSON-able) and ``self.check`` says what every
    sample's result is checked against.
    """

    name: str = ""
    title: str = ""
    #: what ``Sample.count`` counts
    unit: str = "instructions"
    #: an instruction-set workload: run on both engines and compared with riscemu
    scalar: bool = False
    #: samples of each variant per round (each checked, the best kept): more for
    #: workloads whose samples take milliseconds, where one hiccup of the machine
    #: would otherwise decide a ratio
    samples_per_round: int = 1

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
