"""Programs ``tessera demo --arch tile`` runs and checks (also reference programs of the conformance suite).

* ``tiled-matmul``: C (16x32, fp32) = A (16x32, bf16) x B (32x32, bf16) on the two
  threads of the default machine, each computing one 16x16 block of C: TMA brings its
  A and B^T boxes from global memory into shared memory (tensor maps, completion on an
  mbarrier), MMA multiplies them straight from shared memory, and the block goes back
  through shared memory and a TMA tiled store; the threads meet at a t_sync before they
  exit.  The check compares C with numpy and confirms both mbarriers completed a phase.
  The Appendix B mbarrier instructions are off by default, so the program prepares
  each mbarrier by copying an image into shared memory with a linear TMA: "one arrival
  done, 2048 bytes expected", the state ``arrive_expect_tx(2048)`` leaves.
* ``missing-wait``: thread 0 switches itself to checker mode (CSR ``tmode``), starts an
  MMA and stores its destination without ``t_wait(MMA)``; the checker reports the race
  (``machine.tile.races``), the check verifies what it names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.isa import Example

M, K, N = 16, 32, 32          # C = A x B; each thread computes a 16x16 block of C
SH_A, SH_B, SH_C, SH_MBAR = 0x000, 0x400, 0x800, 0xC00   # per-thread shared-memory layout
SH_STRIDE = 0x1000


def _bf16(values: np.ndarray) -> np.ndarray:
    import ml_dtypes

    return values.astype(ml_dtypes.bfloat16)


def _operands() -> tuple[np.ndarray, np.ndarray]:
    """Deterministic small inputs: A (M x K), B (K x N), exactly representable in bf16."""
    i = np.arange(M * K).reshape(M, K)
    j = np.arange(K * N).reshape(K, N)
    a = ((i * 7 + 3) % 17 - 8) / 8.0
    b = ((j * 5 + 1) % 13 - 6) / 4.0
    return _bf16(a), _bf16(b)


def _tensor_map(base: str, elem: int, dims: list[int], strides: list[int], box: list[int]) -> str:
    """A 128-byte tensor map (codes.toml [tensor_map]) as data directives."""
    from tessera_tile.tables import builtin

    tm = builtin().table("tensor_map")
    fields = [(tm["base"], 8, base), (tm["elem_bytes"], 4, elem), (tm["rank"], 4, len(dims))]
    fields += [(tm["dims"] + 8 * d, 8, v) for d, v in enumerate(dims)]
    fields += [(tm["strides"] + 8 * d, 8, v) for d, v in enumerate(strides) if d]
    fields += [(tm["box"] + 4 * d, 4, v) for d, v in enumerate(box)]
    out, pos = [], 0
    for offset, size, value in sorted(fields, key=lambda f: f[0]):
        if offset > pos:
            out.append(f"        .space {offset - pos}")
        out.append(f"        {'.quad' if size == 8 else '.word'} {value}")
        pos = offset + size
    out.append(f"        .space {tm['size'] - pos}")
    return "\n".join(out)


def _mbar_image(expected_bytes: int) -> int:
    from tessera_tile.mbarrier import Packing
    from tessera_tile.tables import builtin

    packing = Packing(builtin().table("mbar_object"))
    return packing.pack({"phase": 0, "pending": 0, "expected": 1, "tx": expected_bytes})


def _halves(data: np.ndarray) -> str:
    words = data.view(np.uint16).ravel()
    return "\n".join("        .half " + ", ".join(f"{w:#06x}" for w in words[i:i + 16])
                     for i in range(0, words.size, 16))


def matmul_source() -> str:
    a, b = _operands()
    bt = np.ascontiguousarray(b.T)           # B^T: N rows of K (the MMA's K-major B)
    return f"""\
# C = A x B with TMA, an mbarrier, MMA from shared memory and a TMA store; two threads.
        .text
        .globl _start
_start:
        tcsrr   s0, tid                 # s0 = thread 0 or 1: computes C[:, 16*s0 .. 16*s0+15]
        slli    s1, s0, 12              # s1 = this thread's shared-memory area
        # the mbarrier: copy its image (linear TMA, bulk group 1) to shared s1+{SH_MBAR:#x}
        la      t0, mbar_image
        li      t1, {SH_MBAR}
        add     t1, t1, s1
        li      t2, 32                  # bytes
        tmv.tx  t8, t2, 0, ew=w         # coord/size vector: lane 0 = bytes
        tmv.vt  v1, t8, 0
        tma.linear t1, t0, v1, dst=shared, group=1
        twait.tma 1
        # coord vectors for the two tiled loads: A at (0, 0), B^T at (0, 16*s0)
        tmv.tx  t8, zero, 0, ew=w, bc   # clear
        tmv.vt  v2, t8, 0               # v2 = (0, 0): A's box
        slli    t3, s0, 4
        tmv.tx  t8, t3, 1, ew=w         # lane 1 = row 16*s0
        tmv.vt  v3, t8, 0               # v3 = (0, 16*s0): B^T's box
        li      a3, {SH_MBAR}
        add     a3, a3, s1       # the mbarrier (a shared-memory address)
        la      t0, map_a
        li      t1, {SH_A}
        add     t1, t1, s1
        tma.tiled t1, t0, v2, dim=2, srctm, dst=shared, mbar=a3
        la      t0, map_bt
        li      t1, {SH_B}
        add     t1, t1, s1
        tma.tiled t1, t0, v3, dim=2, srctm, dst=shared, mbar=a3
        twait   all
        # D = 0; D += A x B^T, both operands straight from shared memory (the MMA engine
        # must not start on D before the ALU engine has zeroed it)
        talu1.zero t0, t0
        twait   alu
        li      a4, {SH_A}
        add     a4, a4, s1
        li      a5, {SH_B}
        add     a5, a5, s1
        tmma.bf16_fp32 t0, (a4), (a5)
        twait   mma
        li      a6, {SH_C}
        add     a6, a6, s1
        tst.s.us t0, (a6)
        twait.mem st=0, shared
        # TMA tiled store of the block to C at (16*s0, 0), bulk group 2
        slli    t3, s0, 4
        tmv.tx  t8, t3, 0, ew=w
        tmv.tx  t8, zero, 1, ew=w
        tmv.vt  v4, t8, 0
        la      t0, map_c
        tma.tiled t0, a6, v4, dim=2, dsttm, src=shared, group=2
        twait.tma 2
        tsync   0, 0b11                 # both threads are done
        li      a0, 0
        li      a7, 93                  # exit
        ecall

        .data
        .align  5
mbar_image:
        .quad   {_mbar_image(2 * M * K * 2)}
        .space  24
        .align  6
map_a:
{_tensor_map("A", 2, [K, M], [2, K * 2], [K, M])}
map_bt:
{_tensor_map("BT", 2, [K, N], [2, K * 2], [K, 16])}
map_c:
{_tensor_map("C", 4, [N, M], [4, N * 4], [16, M])}
        .align  6
A:
{_halves(a)}
BT:
{_halves(bt)}
C:
        .space  {M * N * 4}
"""


def check_matmul(machine: Any, result: Any) -> str | None:
    if result.reason != "halted" or result.exit_code != 0:
        return f"ended {result.reason} with exit status {result.exit_code}"
    a, b = _operands()
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    base = machine.symbols.get("C")
    if base is None:
        return "no symbol C"
    got = np.frombuffer(machine.space.read_bytes(base, M * N * 4), dtype=np.float32).reshape(M, N)
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)[0]
        return f"C[{bad[0]}][{bad[1]}] = {got[tuple(bad)]}, numpy says {want[tuple(bad)]}"
    system = machine.ext["tile"]
    for pe in system.pes:
        for thread in pe.threads:
            off = thread.tid * SH_STRIDE + SH_MBAR
            state = system.mbar_packing.unpack(int.from_bytes(pe.shmem.read_bytes(off, 8), "little"))
            if state["phase"] != 1 or state["tx"] != 0:
                return f"the mbarrier of {thread.name} did not complete its phase: {state}"
    return None


MISSING_WAIT = """\
# Thread 0 stores the destination of an MMA it has not waited for; checker mode reports it.
        .text
        .globl _start
_start:
        tcsrr   a0, tid
        bnez    a0, done
        tcsrwi  zero, tmode, 1          # checker mode for this thread
        la      a1, buf
        tld.g.us t1, (a1)
        tld.g.us t2, (a1)
        twait.mem ld=0
        talu1.zero t0, t0
        twait   alu
        tmma.s8_s8 t0, t1, t2
racy:   tst.g.us t0, (a1)               # missing: twait mma
        twait   all
done:   li      a0, 0
        li      a7, 93
        ecall
        .data
        .align  6
buf:    .space  1024, 1
"""


def check_missing_wait(machine: Any, result: Any) -> str | None:
    if result.reason != "halted":
        return f"ended {result.reason}"
    races = machine.ext["tile"].races
    if len(races) != 1:
        return f"{len(races)} races reported, expected 1: {[str(r) for r in races]}"
    race = races[0]
    racy = machine.symbols.get("racy")
    if racy is None or race.pc != racy + 4 or not race.op.startswith("tmma") or race.access != "tst.g.us":
        return f"the race names the wrong operations: {race}"
    return None


def examples() -> tuple[Example, ...]:
    return (
        Example("tiled-matmul", "C = A x B (bf16 -> fp32) via TMA + mbarrier + MMA + TMA store on two "
                "threads, checked against numpy", matmul_source(), load_address=0x10000,
                max_steps=100_000, check=check_matmul),
        Example("missing-wait", "an MMA destination stored without t_wait(MMA): checker mode reports "
                "the race", MISSING_WAIT, load_address=0x10000, max_steps=10_000, check=check_missing_wait),
    )
