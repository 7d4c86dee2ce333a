"""Workloads ``faults-fastforward`` and ``faults-scaling``: a campaign's injections, and its workers.

Both run the campaign :func:`tessera_faults.bench.campaign_data` describes — random
single-bit flips of ``hart0.x`` spread over the golden run of the checksum program
(about one million instructions), a fixed seed — under a host holding the riscv plugin
and this one.

**``faults-fastforward``** times the injections alone, in this process: one
:func:`~tessera_faults.campaign.task.inject_one` per fault, as a worker runs them, on
the campaign prepared (golden run, snapshots, fault list: not timed) twice —

* ``fast-forward``: ``[run] snapshots = 32``, each injection restores the nearest
  snapshot at or before its trigger;
* ``from-start``: ``snapshots = 0``, each injection runs the program from its start;
* ``naive``: ``snapshots = 0`` and ``converge = false``: every injection runs the whole
  program, as a campaign without checkpoints does (context: ``naive_speedup`` is
  ``fast-forward``'s rate over this one's — what snapshots and convergence give together).

The fault list is the same (same seed, same golden run); ``fastforward_speedup`` is the
ratio of the first two injection rates (target ≥ 5): both stop a run where the machine
is the golden run's again (convergence), so it is what the snapshots alone give.  Every injection still runs from its
trigger to the end of the program (or to the hang budget), so the instructions it runs
are reported too: ``executed_ratio``, from-start's over fast-forward's, is what the
speedup would be if an injection cost only its instructions.

**``faults-scaling``** times the whole campaign as ``run_campaign`` runs it — golden run,
worker start, every injection, the results file — on ``local-1`` and ``local-2`` worker
processes (``two_over_one``, target ≥ 1.8) and on a Dask ``LocalCluster`` of two
single-threaded worker processes (``dask-2``; ``dask_over_local`` against ``local-2``,
target ≥ 0.9).  The cluster is started before and closed after the timed run, as a
campaign meets a cluster that is already up; its start is reported.  Without the
``distributed`` package the Dask variant is skipped with a note.  ``task_time_two_over_one``
is the summed time of the same injections on two workers over one: above 1, the two
cores slowed each other (or another job took one).

Every sample is checked: the golden run's checksum and length
(:func:`~tessera_faults.bench.check_golden`), no injection ended in a tool ``error``,
and every fault ends the same way (outcome, exit, steps, bits) in every sample of
every variant — the campaign's promise that neither snapshots, workers nor backend
change an outcome.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.targets import Target
from tessera_faults.bench import (
    MIN_OUTER,
    OUTER,
    OutcomeCheck,
    campaign_data,
    campaign_host,
    check_golden,
    expected_checksum,
    write_program,
)

#: faults of ``faults-fastforward`` (4 at the tests' tiny scale, 10 with ``--quick``)
FASTFORWARD_FAULTS = 40
#: faults of ``faults-scaling``: about 10 s of injections on one worker, so the fixed
#: costs (golden runs and the def/use record ~0.9 s, worker start ~0.4 s) stay near a
#: tenth of the run (240 before pruning made most injections ~4x cheaper)
SCALING_FAULTS = 960
SNAPSHOTS = 32
SEED = 18


class _CampaignWorkload(Workload):
    """What both campaign workloads share: the program in a temporary directory, the host."""

    unit = "injection"
    rate_style = "ms"

    def __init__(self) -> None:
        super().__init__()
        self.tmp: tempfile.TemporaryDirectory[str] | None = None
        self.checker = OutcomeCheck()

    def _setup(self, ctx: Context) -> Path:
        self.host = campaign_host(ctx)
        self.outer = ctx.size(OUTER, minimum=MIN_OUTER, quick=OUTER)
        self.tmp = tempfile.TemporaryDirectory(prefix="tessera-bench-faults-")
        return write_program(self.tmp.name, self.outer)

    def _check(self) -> dict[str, Any]:
        return {"what": "the golden run's result = the checksum, and its length; no injection fails; "
                        "every fault ends the same way in every sample of every variant",
                "expected": {"result": expected_checksum(self.outer)}}

    def close(self) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None


class FastForward(_CampaignWorkload):
    name = "faults-fastforward"
    title = "fault injections, fast-forward from snapshots vs from the start (RV32, ~1 M instructions)"
    order = 70
    targets = (Target("faults-fastforward", "fault injections per second, 32 snapshots vs from the start",
                      ("faults-fastforward", "derived", "fastforward_speedup"), 5.0, True, "x"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera.batch import HostRecipe
        from tessera_faults.campaign import Campaign, prepare

        program = self._setup(ctx)
        count = ctx.size(FASTFORWARD_FAULTS, minimum=4, quick=10)
        self.plans: dict[str, Any] = {}
        seconds: dict[str, float] = {}
        for variant, snapshots, shortcuts in (("fast-forward", SNAPSHOTS, True), ("from-start", 0, True),
                                              ("naive", 0, False)):
            campaign = Campaign.from_dict(campaign_data(program, count=count, snapshots=snapshots, seed=SEED,
                                                        converge=shortcuts, prune=shortcuts),
                                          base_dir=str(program.parent), source="faults-fastforward")
            t0 = time.perf_counter()
            plan = prepare(campaign, host=self.host)
            seconds[variant] = time.perf_counter() - t0
            check_golden(plan.golden, self.outer)
            self.plans[variant] = plan
        lists = {v: [f.text for f in plan.faults] for v, plan in self.plans.items()}
        if not lists["fast-forward"] == lists["from-start"] == lists["naive"]:
            raise BenchFailure("the two campaigns sampled different fault lists from the same seed")
        self.recipe = HostRecipe.from_host(self.host)
        golden = self.plans["fast-forward"].golden
        self.size = {"outer": self.outer, "golden_steps": golden.steps, "faults": len(lists["from-start"]),
                     "snapshots": SNAPSHOTS, "seed": SEED,
                     "prepare_seconds": {v: round(s, 4) for v, s in seconds.items()},
                     "snapshot_bytes": golden.describe()["snapshot_bytes"]}
        self.check = self._check()
        return [Variant(v, self._runner(v), f"[run] snapshots = {SNAPSHOTS if v == 'fast-forward' else 0}"
                                            f"{', converge = false, prune = false' if v == 'naive' else ''}, "
                                            "every injection in this process")
                for v in self.plans]

    def _runner(self, variant: str) -> Any:
        def run() -> Sample:
            from tessera_faults.campaign.task import inject_one

            plan = self.plans[variant]
            payloads = [plan.payload(f) for f in plan.faults]
            t0 = time.perf_counter()
            results = [inject_one(p, self.recipe, plan.shared) for p in payloads]
            seconds = time.perf_counter() - t0
            outcomes = self.checker(variant, results, len(payloads))
            starts = [r["from_step"] for r in results]
            if variant != "fast-forward" and any(starts):
                raise BenchFailure("from-start: an injection did not start from step 0")
            if variant == "fast-forward" and not any(starts):
                raise BenchFailure("fast-forward: no injection started from a snapshot")
            executed = sum(max(0, _stopped_at(r) - (r["from_step"] or 0)) for r in results)
            return Sample(seconds, len(results), {
                "instructions_run": executed, "mean_from_step": sum(starts) / len(starts),
                "mean_task_seconds": sum(r["seconds"] for r in results) / len(results), "outcomes": outcomes,
                "converged": sum(1 for r in results if r.get("converged_at") is not None and not r.get("pruned")),
                "pruned": sum(1 for r in results if r.get("pruned"))})

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        ff, start, naive = best.get("fast-forward"), best.get("from-start"), best.get("naive")
        if ff is None or start is None:
            return {}
        out = {"fastforward_speedup": ff.rate / start.rate,
               "executed_ratio": start.extra["instructions_run"] / max(1, ff.extra["instructions_run"])}
        if naive is not None:
            out["naive_speedup"] = ff.rate / naive.rate
        return out

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        derived = entry["derived"]
        if variant != "fast-forward" or "fastforward_speedup" not in derived:
            return []
        naive = f"; {derived['naive_speedup']:.2f}x naive" if "naive_speedup" in derived else ""
        return [f"{derived['fastforward_speedup']:.2f}x from-start "
                f"({derived['executed_ratio']:.2f}x fewer instructions run){naive}"]


def _stopped_at(result: dict[str, Any]) -> int:
    """The step an injection's run stopped at: its trigger when pruned, the checkpoint where it
    converged, else its end."""
    if result.get("pruned"):
        return int(result["step"])
    return int(result.get("converged_at") or result["steps"] or 0)


#: variant -> local worker processes (``None``: the Dask cluster's two workers)
SCALING_VARIANTS: dict[str, int | None] = {"local-1": 1, "local-2": 2, "dask-2": None}
DASK_WORKERS = 2


class Scaling(_CampaignWorkload):
    name = "faults-scaling"
    title = "a whole campaign on 1 and 2 local workers and a 2-worker Dask LocalCluster"
    order = 71
    targets = (
        Target("faults-scaling", "campaign on 2 local workers vs 1 (2 cores)",
               ("faults-scaling", "derived", "two_over_one"), 1.8, True, "x"),
        Target("faults-dask", "campaign on a 2-worker Dask LocalCluster vs the 2-worker local pool",
               ("faults-scaling", "derived", "dask_over_local"), 0.9, True, "x"),
    )

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera_faults.campaign import Campaign, prepare

        program = self._setup(ctx)
        count = ctx.size(SCALING_FAULTS, minimum=4, quick=60)
        self.campaign = Campaign.from_dict(campaign_data(program, count=count, snapshots=SNAPSHOTS, seed=SEED),
                                           base_dir=str(program.parent), source="faults-scaling")
        plan = prepare(self.campaign, host=self.host)   # the golden run checked once; every sample redoes it
        check_golden(plan.golden, self.outer)
        self.golden_steps = plan.golden.steps
        self.faults = len(plan.faults)
        self.samples = 0
        self.size = {"outer": self.outer, "golden_steps": plan.golden.steps, "faults": self.faults,
                     "snapshots": SNAPSHOTS, "seed": SEED, "dask_workers": DASK_WORKERS}
        self.check = self._check()
        return [Variant(name, self._runner(name, workers),
                        f"run_campaign, {workers} local worker process{'es' if workers != 1 else ''}"
                        if workers is not None else
                        f"run_campaign on a distributed.LocalCluster({DASK_WORKERS} workers, 1 thread each)")
                for name, workers in SCALING_VARIANTS.items()]

    def _runner(self, variant: str, workers: int | None) -> Any:
        def run() -> Sample:
            assert self.tmp is not None
            self.samples += 1
            out = os.path.join(self.tmp.name, f"{variant}-{self.samples}.jsonl")
            if workers is not None:
                seconds, summary = self._campaign(out, workers=workers)
                extra: dict[str, Any] = {}
            else:
                seconds, summary, extra = self._on_dask(out)
            if summary.golden_steps != self.golden_steps or summary.ran != self.faults:
                raise BenchFailure(f"{variant}: ran {summary.ran} of {self.faults} faults, golden run "
                                   f"{summary.golden_steps} steps (expected {self.golden_steps})")
            results = _read_results(out)
            extra["outcomes"] = self.checker(variant, results, self.faults)
            extra["task_seconds"] = sum(r["seconds"] for r in results)
            return Sample(seconds, summary.ran, extra)

        return run

    def _campaign(self, out: str, **where: Any) -> tuple[float, Any]:
        from tessera_faults.campaign import run_campaign

        t0 = time.perf_counter()
        summary = run_campaign(self.campaign, out, host=self.host, progress=False, quiet=True, **where)
        return time.perf_counter() - t0, summary

    def _on_dask(self, out: str) -> tuple[float, Any, dict[str, Any]]:
        try:
            import distributed
        except ImportError:
            raise Skip("the distributed package is not installed (pip install 'tessera[dask]'): "
                       "no Dask cluster to compare with") from None
        import dask

        t0 = time.perf_counter()
        # Dask's statistical profiler samples every worker thread's stack every 10 ms: in a
        # worker running GIL-bound emulation it takes its time from the runs (docs/faults.md
        # recommends turning it off for campaigns, as here)
        with dask.config.set({"distributed.worker.profile.enabled": False}), \
                distributed.LocalCluster(n_workers=DASK_WORKERS, threads_per_worker=1, processes=True,
                                         dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            started = time.perf_counter() - t0
            seconds, summary = self._campaign(out, client=client)
        return seconds, summary, {"cluster_start_seconds": started}

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        one, two, dask = best.get("local-1"), best.get("local-2"), best.get("dask-2")
        out: dict[str, Any] = {}
        if one is not None and two is not None:
            out["two_over_one"] = two.rate / one.rate
            out["task_time_two_over_one"] = two.extra["task_seconds"] / one.extra["task_seconds"]
        if two is not None and dask is not None:
            out["dask_over_local"] = dask.rate / two.rate
        return out

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        derived = entry["derived"]
        if variant == "local-2" and "two_over_one" in derived:
            return [f"{derived['two_over_one']:.2f}x local-1 (injections {derived['task_time_two_over_one']:.2f}x "
                    "longer each)"]
        if variant == "dask-2" and "dask_over_local" in derived:
            return [f"{derived['dask_over_local']:.2f}x local-2"]
        return []


def _read_results(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


__all__ = ["FastForward", "Scaling"]
