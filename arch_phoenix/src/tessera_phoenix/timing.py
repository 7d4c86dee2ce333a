"""Nominal cycle cost of each timing class (spec sections 4 and 6).

The nominal model charges every instruction a fixed number of cycles by class; the
machine clock (TICK) is the largest thread's cycle count.  The numbers are the doc's
per-instruction "Clock Cycles" figures, taking the *latency* where the doc gives
"1, latency 8" (FP, conversions, estimates), because one thread cannot use an FP
result earlier (no forwarding, spec 6):

* 1 — integer ALU, compares, shifts, bit/mask ops, vector moves, branches and jumps,
  CSR access, BRK/RTI/queue ops, NOP/PFX, TLB access;
* 8 — multiply (the multi-cycle unit, ~8 in spec 6), FP arithmetic/FMA family,
  conversions, FTRUNC and the reciprocal/sqrt/sigmoid estimates;
* 20 — loads, stores and CACHE (the doc's "one memory access" figure);
* 4 — REX.

Exception entry (``trap``) costs 1, like the taken transfer it is.  A cycle-accurate
pipeline (round robin, scoreboard, memory latencies) belongs in a timing plugin
(``tessera_timing_model``), not here.
"""

TIMING = {
    "default": 1,
    "alu": 1,
    "vector": 1,
    "branch": 1,
    "csr": 1,
    "sys": 1,
    "nop": 1,
    "mmu": 1,
    "fpmove": 1,     # FNEG/FABS/FNABS/FSIGN/FCLASS/FFINITE: "1/1" in spec 4.6
    "mul": 8,
    "fp": 8,
    "fpest": 8,
    "mem": 20,
    "cache": 20,
    "rex": 4,
    "trap": 1,
}
