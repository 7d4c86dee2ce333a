"""``tessera bench``: Tessera's speed against its peers, measured in one process run.

No test depends on timing; this package is the one place speed is measured.  The
core keeps the machinery — the :class:`~tessera.bench.model.Workload` model, the
runner (:mod:`tessera.bench.runner`: interleaved, best-of-K), the targets and the
report (:mod:`tessera.bench.report`) — and the ``startup`` workload, which times
whole ``tessera`` commands.  Every workload that measures an architecture or a tool
is its plugin's contribution, offered through the ``tessera_bench_workloads`` hook
(:mod:`tessera.bench.registry`).  Every sample's result is checked, so a fast wrong
answer is a failure, never a benchmark number.  See docs/performance.md for what
each workload measures and the targets.

This module imports nothing at import time: the ``tessera`` command reads
:data:`WORKLOAD_NAMES` for its help and ``--only``, and asks the plugins only then.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: The workload every instruction-set workload's rate is compared with, and the key of
#: that comparison (``vs_riscemu``) and of the peer's version in the machine facts.
#: Fixed here because it is the report's published format — scripts read
#: ``workloads.<name>.vs_riscemu.fast`` — not because the core knows riscemu: the
#: riscv plugin offers the workload, and without it every ratio is ``null``.
PEER = "riscemu"


class OfferedNames:
    """The names of the workloads offered now, in report order: a live, read-only sequence.

    Each use asks the process's current plugin host (``tessera.plugins.default_host()``,
    which a ``tessera`` command sets to its own host, so ``--no-plugin`` applies) what
    its plugins offer.  Holding this object — ``from tessera.bench import
    WORKLOAD_NAMES`` — never freezes a list that another host would contradict.
    """

    def _names(self) -> tuple[str, ...]:
        from tessera.bench.registry import offered_workloads
        from tessera.plugins import default_host

        return tuple(offered_workloads(default_host()))

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __len__(self) -> int:
        return len(self._names())

    def __getitem__(self, index: Any) -> Any:
        return self._names()[index]

    def __eq__(self, other: object) -> bool:
        return self._names() == (tuple(other) if isinstance(other, list | tuple | OfferedNames) else other)

    __hash__ = None  # type: ignore[assignment]  # live: equal to different tuples over time

    def __repr__(self) -> str:
        return f"WORKLOAD_NAMES{self._names()!r}"


#: the workloads the enabled plugins (and the core) offer, in run and report order
WORKLOAD_NAMES = OfferedNames()
