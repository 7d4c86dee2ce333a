"""``run_campaign``: golden run, fault list, injections on local workers or Dask, results streamed.

The order of work: the campaign's ``[program]`` is checked as a ``tessera batch`` spec;
the golden run records outputs and checkpoints (:mod:`~tessera_faults.campaign.golden`);
the fault space is sampled (:mod:`~tessera_faults.campaign.space`); the metadata file
``RESULTS.campaign.json`` is written; the results file is read, and faults whose result
is there with the same ``spec_hash`` are skipped (resume — the hash covers the campaign
and the program, so a changed campaign runs its faults again); the rest run as tasks of
:func:`tessera.batch.run_tasks` (local processes, or the Dask cluster of ``client``), and
each result line is written and flushed the moment it arrives.

Same seed, same campaign: the same fault list and the same outcomes on any number of
workers and either backend — only ``seconds`` differs.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from tessera.batch import BatchProgress, HostRecipe, ResultsFile, load_specs, run_tasks
from tessera.errors import ConfigError
from tessera_faults.campaign.config import Campaign, load_campaign
from tessera_faults.campaign.golden import Golden, build_machine, golden_run
from tessera_faults.campaign.liveness import record_liveness, wanted
from tessera_faults.campaign.space import PlannedFault, plan, populations

__all__ = ["TASK", "CampaignPlan", "CampaignSummary", "prepare", "run_campaign"]

#: the worker task of every injection
TASK = "tessera_faults.campaign.task:inject_one"
#: keys of ``[program]`` that have no meaning in a campaign
_REFUSED_PROGRAM_KEYS = ("options", "id")


@attrs.frozen
class CampaignSummary:
    """What :func:`run_campaign` did: ``outcomes`` counts every fault of the campaign (those
    run now and those found done)."""

    name: str
    total: int
    ran: int
    skipped: int
    outcomes: dict[str, int]
    output: str
    metadata: str
    seconds: float
    golden_steps: int

    def line(self) -> str:
        counts = ", ".join(f"{name} {n}" for name, n in sorted(self.outcomes.items())) or "nothing to run"
        done = f" ({self.skipped} done before)" if self.skipped else ""
        return (f"campaign {self.name}: {self.total} faults{done}: {counts}; results in {self.output} "
                f"({self.seconds:.1f} s)")


@attrs.frozen
class CampaignPlan:
    """A campaign ready to run: its golden run, faults, and the data every worker gets."""

    campaign: Campaign
    golden: Golden
    faults: tuple[PlannedFault, ...]
    populations: tuple[dict[str, Any], ...]
    key: str
    shared: dict[str, Any]
    program: dict[str, Any]
    #: what the def/use record of the golden run covers (``None``: no pruning)
    liveness: dict[str, Any] | None = None

    def payload(self, fault: PlannedFault) -> dict[str, Any]:
        digest = hashlib.sha256(f"{self.key}\0{fault.text}".encode()).hexdigest()
        return {"id": fault.text, "spec_hash": digest, "fault": fault.text, "population": fault.population,
                "model": fault.model, "class": fault.cls, "step": fault.step}

    def metadata(self) -> dict[str, Any]:
        c = self.campaign
        return {"name": c.name, "source": c.source, "arch": self.program["arch"], "program": self.program["program"],
                "seed": c.seed, "sampling": c.sampling, "margin": c.margin, "confidence": c.confidence,
                "count": c.count, "models": [str(m) for m in c.models], "outputs": attrs.asdict(c.outputs),
                "budget": self.shared["budget"], "key": self.key, "golden": self.golden.describe(),
                "faults": len(self.faults), "populations": list(self.populations), "liveness": self.liveness}


def _host(host: Any) -> Any:
    if host is not None:
        return host
    from tessera.plugins import default_host

    return default_host()


def prepare(campaign: Campaign | str | os.PathLike[str], *, host: Any = None) -> CampaignPlan:
    """Check the campaign, do its golden run and sample its faults (nothing injected yet)."""
    if not isinstance(campaign, Campaign):
        campaign = load_campaign(campaign)
    host = _host(host)
    refused = [k for k in _REFUSED_PROGRAM_KEYS if k in campaign.program]
    if refused:
        raise ConfigError(f"{campaign.source}: [program] {refused[0]} has no meaning in a campaign")
    (spec,) = load_specs([campaign.program], host)
    program = dict(spec.payload)
    golden = golden_run(campaign, program, host)
    live = record_liveness(program, host, golden.steps) if wanted(campaign) else None
    machine = build_machine(program, host)
    pops = populations(campaign, machine, golden.steps, golden.class_counts)
    faults, described = plan(campaign, pops)
    _check_faults(faults, machine)
    identity = json.dumps({"campaign": campaign.identity(), "program": spec.hash, "golden": golden.state},
                          sort_keys=True, default=str)
    key = hashlib.sha256(identity.encode()).hexdigest()
    budget = int(golden.steps * campaign.budget_factor) + campaign.budget_slack
    shared = {"key": key, "engine": program["engine"], "budget": budget,
              "checkpoints": [(c.step, c.snapshot, c.stdout, c.digest, c.whole) for c in golden.checkpoints],
              "golden": {"steps": golden.steps, "cycles": golden.cycles, "exit": golden.exit, "outputs": golden.outputs, "state": golden.state},
              "outputs": attrs.asdict(campaign.outputs),
              "liveness": live.shared() if live is not None else None}
    return CampaignPlan(campaign, golden, tuple(faults), tuple(described), key, shared, program,
                        live.describe() if live is not None else None)


def _check_faults(faults: list[PlannedFault], machine: Any) -> None:
    """Every explicit fault can be armed on the program (one line naming the first that cannot)."""
    from tessera_faults.injector import Injector
    from tessera_faults.spec import Fault

    for fault in faults:
        if fault.population != "explicit":
            continue
        Injector(Fault.parse(fault.text)).check(machine)


def metadata_path(output: str) -> str:
    return f"{output}.campaign.json"


def run_campaign(campaign: Campaign | str | os.PathLike[str], output: str | os.PathLike[str], *,
                 workers: int | None = None, client: Any = None, host: Any = None, progress: bool | None = None,
                 quiet: bool = False, on_note: Callable[[str], None] | None = None,
                 limit: int | None = None) -> CampaignSummary:
    """Run a fault-injection campaign; results stream to ``output`` (JSON lines).

    ``campaign`` is a :class:`Campaign` or a campaign file's path.  Faults whose results
    are in ``output`` already are skipped (resume).  They run on ``workers`` local
    processes (default: the CPU count) or on the Dask cluster of ``client`` (a
    ``distributed.Client``).  ``limit`` runs at most that many faults now (the rest on the
    next call).  The metadata (golden run, populations) goes to ``OUTPUT.campaign.json``.
    """
    t0 = time.perf_counter()
    if client is None and workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, not {workers}")
    if limit is not None and limit < 0:
        raise ConfigError(f"limit must be at least 0, not {limit}")
    host = _host(host)
    ready = prepare(campaign, host=host)
    out = os.fspath(output)
    if out == "-":
        raise ConfigError("a campaign's results go to a file (they are resumed), not to standard output")
    payloads = [ready.payload(f) for f in ready.faults]
    results = ResultsFile(out)
    results.open({p["id"]: p["spec_hash"] for p in payloads})
    meta = metadata_path(out)
    try:
        with open(meta, "w", encoding="utf-8") as fh:
            json.dump(ready.metadata(), fh, indent=2, sort_keys=True)
            fh.write("\n")
    except OSError as exc:
        results.close()
        raise ConfigError(f"cannot write {meta}: {exc.strerror or exc}") from None
    current = {p["id"] for p in payloads}
    done = {ident: r for ident, r in results.done.items() if ident in current}
    todo = [p for p in payloads if p["id"] not in done]
    if limit is not None:
        todo = todo[:limit]
    outcomes: Counter[str] = Counter(r.get("outcome", "error") for r in done.values())
    try:
        with BatchProgress(len(todo), enabled=progress, skipped=len(done), quiet=quiet, label="campaign") as bar:
            note = on_note or bar.note
            if results.truncated:
                note(f"{out}: dropped a last line cut short by an interrupted write; that fault is injected again")
            if results.stale:
                note(f"{out}: {len(results.stale)} results of an earlier version of this campaign are run again")
            for result in run_tasks(todo, HostRecipe.from_host(host), task=TASK, shared=ready.shared,
                                    workers=workers, client=client):
                results.write(result)
                outcomes[result["outcome"]] += 1
                bar.advance(result["outcome"])
    finally:
        results.close()
    return CampaignSummary(name=ready.campaign.name, total=len(payloads), ran=len(todo), skipped=len(done),
                           outcomes=dict(sorted(outcomes.items())), output=out, metadata=meta,
                           seconds=time.perf_counter() - t0, golden_steps=ready.golden.steps)
