"""The faults plugin's ``tessera bench`` workloads: what campaigns and armed faults cost.

Three workloads, offered through ``tessera_bench_workloads`` in
:mod:`tessera_faults.plugin`, which imports this module only when the bench asks:

* ``faults-fastforward`` — injections per second of one campaign's fault list with
  golden-run snapshots to fast-forward from (``[run] snapshots = 32``) and without
  (``snapshots = 0``: every injection runs from the start), in this process
  (:mod:`tessera_faults.bench_campaign`);
* ``faults-scaling`` — the whole campaign (golden run, workers, every injection) on one
  and two local worker processes, and on a two-worker Dask ``LocalCluster``
  (:mod:`tessera_faults.bench_campaign`);
* ``faults-armed`` — the ``rv32`` loop on the fast engine with no fault, with a fault
  armed whose counted trigger lies after the end of the run, and with one that fires
  near the end (:mod:`tessera_faults.bench_armed`).

The campaigns run :data:`PROGRAM`, an RV32 assembly loop written here (no cross
compiler needed): a checksum that folds a 64-word table into ``a0`` with adds, rotates
and xors, ``outer`` times over, stores it in ``result`` and exits with its low seven
bits.  At the default size the golden run is about one million instructions.  The
result :func:`expected_checksum` computes must be what the golden run stored, so a
wrong emulator is a failure, never a benchmark number.  This module imports nothing
heavy: workload modules are imported by :func:`workloads`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, Context, Workload

ARCH = "rv32im"
DISTRIBUTION = "tessera-riscv"
#: the golden run's instructions: 581 an outer round (64 × 9 in the inner loop, 5 around
#: it) and 9 before and after the loops
INSTRUCTIONS_PER_OUTER = 581
#: outer rounds at the default size: 1,724 × 581 + 9 = 1,001,653 instructions
OUTER = 1724
#: the smallest program (``--scale`` far below 1, as the tests run it): still longer than
#: 32 snapshots
MIN_OUTER = 20
WORDS = 64
MASK = 0xFFFF_FFFF
SEED_VALUE = 0x12345678
#: the table the loop folds: Knuth's multiplicative hash of 0..63 (no zero after the first)
TABLE = tuple((i * 2654435761) & MASK for i in range(WORDS))

PROGRAM = """\
    # checksum: a0 = fold(table) OUTER times; result = a0; exit(a0 & 0x7f)
    li   s2, {outer}
    li   a0, {seed:#x}
outer:
    la   s0, table
    li   s1, {words}
inner:
    lw   t1, 0(s0)
    add  a0, a0, t1
    slli t2, a0, 5
    srli t3, a0, 27
    or   a0, t2, t3
    xor  a0, a0, s1
    addi s0, s0, 4
    addi s1, s1, -1
    bnez s1, inner
    addi s2, s2, -1
    bnez s2, outer
    la   t0, result
    sw   a0, 0(t0)
    andi a0, a0, 0x7f
    li   a7, 93
    ecall
    .align 4
table:
    .word {table}
result:
    .word 0
"""


def program_text(outer: int) -> str:
    """The assembly source of the checksum loop with ``outer`` rounds."""
    return PROGRAM.format(outer=outer, seed=SEED_VALUE, words=WORDS, table=", ".join(f"{w:#x}" for w in TABLE))


def expected_checksum(outer: int) -> int:
    """What the program leaves in ``result`` (the loop above, in Python)."""
    a0 = SEED_VALUE
    for _ in range(outer):
        for i, word in enumerate(TABLE):
            a0 = (a0 + word) & MASK
            a0 = ((a0 << 5) | (a0 >> 27)) & MASK
            a0 ^= WORDS - i
    return a0


def write_program(directory: str | Path, outer: int) -> Path:
    """Write the program with ``outer`` rounds as ``checksum.s`` in ``directory``."""
    path = Path(directory) / "checksum.s"
    path.write_text(program_text(outer), encoding="utf-8")
    return path


def campaign_data(program: Path, *, count: int, snapshots: int, seed: int, converge: bool = True,
                  prune: bool = True) -> dict[str, Any]:
    """A campaign (the parsed-TOML form) over the checksum program: ``count`` random
    single-bit flips of ``hart0.x`` spread over the whole golden run."""
    return {
        "name": "bench-checksum", "seed": seed,
        "program": {"program": str(program), "arch": ARCH, "format": "asm", "set": {"ram": "1M"}},
        "outputs": {"memory": ["result:+4"]},
        "faults": {"targets": ["hart0.x"], "models": ["flip"], "sampling": "random", "count": count},
        "run": {"snapshots": snapshots, "converge": converge, "prune": prune},
    }


def campaign_host(ctx: Context) -> Any:
    """A host with the riscv plugin (from the command's host: ``Skip`` without it) and this one.

    Both are modules, so worker processes can build the same host again
    (:class:`tessera.batch.HostRecipe`).
    """
    import tessera_faults.plugin

    _arch, name, plugin = architecture_plugin(ctx.host, ARCH, DISTRIBUTION)
    return minimal_host((plugin, name), (tessera_faults.plugin, "faults"))


def golden_steps(outer: int) -> int:
    """The instructions the program retires with ``outer`` rounds."""
    return INSTRUCTIONS_PER_OUTER * outer + 9


def check_golden(golden: Any, outer: int) -> None:
    """The golden run stored the checksum, exited with its low bits and retired every
    instruction of the loop (:class:`BenchFailure` if not)."""
    want = expected_checksum(outer)
    stored = golden.outputs.get("memory:result:+4")
    if stored != want.to_bytes(4, "little").hex() or golden.exit != want & 0x7F \
            or golden.steps != golden_steps(outer):
        raise BenchFailure(f"wrong golden run: result {stored}, exit {golden.exit}, {golden.steps} steps; "
                           f"expected {want.to_bytes(4, 'little').hex()}, exit {want & 0x7F}, "
                           f"{golden_steps(outer)} steps")


#: what each result line must agree on between variants and samples (``seconds`` never does)
OUTCOME_KEYS = ("outcome", "exit", "steps", "differs", "old", "new")


def outcome_of(result: dict[str, Any]) -> tuple[Any, ...]:
    """The parts of one injection's result that cannot depend on how it was run."""
    return tuple(json.dumps(result.get(key), sort_keys=True) for key in OUTCOME_KEYS)


class OutcomeCheck:
    """Every sample of a workload must give each fault the same outcome: the first sample
    sets the reference, the others are compared with it (:class:`BenchFailure` naming the
    first fault that differs).  An ``error`` outcome (the tool failed) always fails.  Returns
    how many faults ended in each outcome (:data:`~tessera_faults.campaign.OUTCOMES`)."""

    def __init__(self) -> None:
        self.reference: dict[str, tuple[Any, ...]] | None = None

    def __call__(self, variant: str, results: list[dict[str, Any]], expected: int) -> dict[str, int]:
        if len(results) != expected:
            raise BenchFailure(f"{variant}: {len(results)} results for {expected} faults")
        errors = [r for r in results if r.get("outcome") == "error"]
        if errors:
            raise BenchFailure(f"{variant}: injecting {errors[0]['fault']} failed: {errors[0].get('error')}")
        got = {r["id"]: outcome_of(r) for r in results}
        if self.reference is None:
            self.reference = got
        elif got != self.reference:
            first = next(k for k in self.reference if got.get(k) != self.reference[k])
            raise BenchFailure(f"{variant}: fault {first} ended {got.get(first)}, another run gave "
                               f"{self.reference[first]}")
        from tessera_faults.campaign import OUTCOMES

        counts = dict.fromkeys(OUTCOMES, 0)   # every outcome, so the report's keys do not depend on the faults
        for r in results:
            counts[r["outcome"]] += 1
        return counts


def workloads() -> list[type[Workload]]:
    """What the faults plugin offers ``tessera bench``, in its hook's answer."""
    from tessera_faults.bench_armed import ArmedFault
    from tessera_faults.bench_campaign import FastForward, Scaling

    return [FastForward, Scaling, ArmedFault]


__all__ = ["OUTER", "PROGRAM", "OutcomeCheck", "campaign_data", "campaign_host", "check_golden",
           "expected_checksum", "golden_steps", "program_text", "workloads", "write_program"]
