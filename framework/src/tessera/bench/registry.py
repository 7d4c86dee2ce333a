"""Which workloads a run offers: the core's own, and those of every enabled plugin.

The core knows no architecture, so it cannot name the workloads that measure one:
each plugin offers its own through the hook ``tessera_bench_workloads(host)``
(docs/hooks.md), returning :class:`~tessera.bench.model.Workload` subclasses.  The
core adds the workloads that need no architecture (``startup``, which asks the
offered workloads for the commands it times).  A disabled or missing plugin offers
nothing, so its workloads simply are not there — ``--only`` cannot select them and
the report has no entry for them; :func:`unavailable_plugins` says which plugins
might have offered some.

Answers are checked like ``tessera_architectures``' are: a hook that raises, or
returns something that is not a named ``Workload`` subclass, marks its plugin failed
(logged, skipped); a name offered twice keeps the first offer (the core's, then the
plugins' in hook order) and the other is dropped with a warning naming both.
"""

from __future__ import annotations

from typing import Any

from tessera.bench.model import Workload
from tessera.logs import get_logger
from tessera.plugins import ACTIVE

log = get_logger("tessera.bench")

HOOK = "tessera_bench_workloads"


def core_workloads() -> list[type[Workload]]:
    """The workloads the core offers itself: none names an architecture."""
    from tessera.bench.startup import Startup

    return [Startup]


def _valid(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, Workload) and isinstance(cls.name, str) and bool(cls.name)


def _describe(obj: Any) -> str:
    return obj.__name__ if isinstance(obj, type) else type(obj).__name__


def offered_workloads(host: Any) -> dict[str, type[Workload]]:
    """``{name: Workload subclass}`` of everything ``host`` offers, in report order.

    Report order is each class's ``order``, then its name: the same whatever order
    the plugins load in.
    """
    offered: dict[str, tuple[type[Workload], str]] = {cls.name: (cls, "the core") for cls in core_workloads()}
    for plugin, answer in host.call_each(HOOK, host=host):
        classes = list(answer or [])
        bad = [c for c in classes if not _valid(c)]
        if bad:
            reason = f"{HOOK} returned {_describe(bad[0])}, not a named tessera.bench Workload subclass"
            log.warning("plugin hook failed", plugin=plugin, hook=HOOK, error=reason)
            host.fail(plugin, reason)
            continue
        for cls in classes:
            if cls.name in offered and offered[cls.name][0] is not cls:
                log.warning("workload offered twice: the first offer is kept", workload=cls.name,
                            kept=offered[cls.name][1], dropped=f"plugin {plugin}")
                continue
            offered[cls.name] = (cls, f"plugin {plugin}")
    ordered = sorted(offered.values(), key=lambda pair: (pair[0].order, pair[0].name))
    return {cls.name: cls for cls, _by in ordered}


def unavailable_plugins(host: Any) -> list[str]:
    """One line per plugin that is installed but not active: what it offers is not run."""
    return [f"plugin {record.name} is {record.status} ({record.reason}): workloads it offers are not run"
            for record in host.records.values() if record.status != ACTIVE]


__all__ = ["HOOK", "core_workloads", "offered_workloads", "unavailable_plugins"]
