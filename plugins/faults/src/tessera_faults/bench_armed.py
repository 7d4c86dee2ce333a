"""Workload ``faults-armed``: what an armed fault costs a run that it does not (yet) change.

A fault with a counted trigger (``at=retired:N``) is a pause of the run
(``Machine.pause_at``), not a callback per instruction: until it fires the fast engine
runs its translated blocks untouched.  The workload checks that promise on the riscv
plugin's ``rv32`` program (its compiled sum loop, 1,000,000 iterations: about 3 M
instructions; found through the bench, ``Context.program``), on the fast engine, under
a host holding the riscv plugin and this one:

* ``no-fault`` — the plain run;
* ``armed`` — a flip of ``x31`` armed with ``at=retired:N``, N twice the run's
  instructions: armed the whole run, never fired (its record ends ``not reached``, and the plugin's
  warning saying so is collected, not printed);
* ``fired`` — the same flip at 99 % of the run: the run is cut once, the register
  flipped, the run goes on (its record ends ``injected``).

The loop never reads ``x31``, so every variant must store the same sum (checked each
sample, as the ``rv32`` workload checks it) and the fault's record must say what
happened.  ``armed_ratio`` and ``fired_ratio`` are each variant's rate over
``no-fault``'s (targets ≥ 0.95: at most 5 % slower).  Arming is not timed; the run is.
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Variant, Workload
from tessera.bench.targets import Target

#: the workload whose program is run
PROGRAM = "rv32"
#: about 9 M instructions (~0.4 s): a long run, where a per-instruction cost would show
#: above the noise of a shared 2-core machine
ITERATIONS = 3_000_000
ENGINE = "fast"
#: a register the compiled sum loop never reads
TARGET = "x31"
#: variant -> where its trigger lies, as a fraction of the run's instructions (None: no fault)
VARIANTS: dict[str, float | None] = {"no-fault": None, "armed": 2.0, "fired": 0.99}
#: the status each variant's fault record must end with
STATUS = {"armed": "not reached", "fired": "injected"}


class ArmedFault(Workload):
    name = "faults-armed"
    title = "an armed fault (counted trigger) on the compiled RV32 loop, fast engine"
    order = 72
    samples_per_round = 5   # a sample takes ~0.4 s; the targets are about 5 %: the best of five
    targets = (
        Target("faults-armed", "a fault armed but never triggered, rate vs no fault (fast engine)",
               ("faults-armed", "derived", "armed_ratio"), 0.95, True, "x"),
        Target("faults-fired", "a fault that fires at 99 % of the run, rate vs no fault (fast engine)",
               ("faults-armed", "derived", "fired_ratio"), 0.95, True, "x"),
    )

    def prepare(self, ctx: Context) -> list[Variant]:
        import tessera_faults.plugin

        self.program = ctx.program(PROGRAM, ctx.size(ITERATIONS, minimum=1000, quick=ITERATIONS))
        self.host = minimal_host(self.program.plugin, (tessera_faults.plugin, "faults"))
        calibration = self.program.run(self.program.machine(self.host, ENGINE))   # untimed: its length
        self.instructions = calibration.count
        self.faults = {name: f"target={TARGET},model=flip,bit=7,at=retired:{max(1, int(self.instructions * where))}"
                       for name, where in VARIANTS.items() if where is not None}
        self.size = {"iterations": self.program.iterations, "instructions": self.instructions, "engine": ENGINE,
                     "faults": dict(self.faults)}
        self.check = {**self.program.check, "fault_status": dict(STATUS)}
        return [Variant(name, self._runner(name), "no fault" if name not in self.faults else self.faults[name])
                for name in VARIANTS]

    def _runner(self, variant: str) -> Any:
        def run() -> Sample:
            import tessera_faults
            from tessera.logs import collect

            machine = self.program.machine(self.host, ENGINE)
            fault = self.faults.get(variant)
            record = tessera_faults.inject(machine, fault) if fault is not None else None
            with collect() as events:   # every variant alike: the armed one's warning is kept, not printed
                sample = self.program.run(machine)
            if variant == "armed" and not any(e.get("event", "").startswith("fault not injected") for e in events):
                raise BenchFailure(f"{variant}: the run ended without the warning that {fault} was not injected")
            if record is not None:
                if record.get("status") != STATUS[variant]:
                    raise BenchFailure(f"{variant}: the fault {fault} ended {record.get('status')!r}, "
                                       f"expected {STATUS[variant]!r}")
                sample.extra["status"] = record["status"]
            return sample

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        base = best.get("no-fault")
        if base is None:
            return {}
        return {f"{name}_ratio": best[name].rate / base.rate for name in STATUS if name in best}

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        ratio = entry["derived"].get(f"{variant}_ratio")
        return [] if ratio is None else [f"{(1 / ratio - 1) * 100:+.1f} % time vs no-fault"]


__all__ = ["ArmedFault"]
