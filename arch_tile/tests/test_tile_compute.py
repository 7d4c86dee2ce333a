"""MMA and TALU executors (tile.md 5.5, 5.7): operands, groups, flags and CSRs reach the numerics."""

from __future__ import annotations

import numpy as np
import pytest
from tile_support import EXIT, machine, needs_numerics, run, set_tile, tile_bytes

from tessera.errors import UnhandledTrap
from tessera_tile.tables import builtin

pytestmark = needs_numerics

RNG = np.random.default_rng(7)
MMAUOP = builtin().table("mmauop")


def _random_tile() -> bytes:
    return RNG.integers(0, 256, 1024, dtype=np.uint8).tobytes()


def _float_tile(dtype) -> bytes:
    values = RNG.standard_normal(1024 // np.dtype(dtype).itemsize).astype(np.float32)
    return values.astype(dtype).tobytes()


@pytest.mark.parametrize("name", list(MMAUOP))
def test_every_mma_type_matches_the_numerics(name):
    from tessera_tile.numerics.mma import MMA_TYPES, mma

    code = MMAUOP[name]
    mt = MMA_TYPES[code]
    m = machine(f"_start:\n        tmma.{name} t0, t1, t2, neg1, ta, tb\n{EXIT}")
    a, b = _random_tile(), _random_tile()
    if mt.a.is_float:      # random bytes may be NaNs: use values of the format instead
        a, b = _float_tile(mt.a.dtype), _float_tile(mt.b.dtype)
    d = _float_tile(mt.acc.dtype) if mt.acc.is_float else _random_tile()
    for i, data in enumerate((d, a, b)):
        set_tile(m, i, data)
    m.run(max_steps=100)
    want = mma(d, a, b, code, trans_a=True, trans_b=True, neg_a=True, neg_d=False, row_bytes=64)
    assert tile_bytes(m, 0) == want


def test_bf16_mma_against_numpy():
    import ml_dtypes

    a = RNG.standard_normal((16, 32)).astype(ml_dtypes.bfloat16)
    bt = RNG.standard_normal((16, 32)).astype(ml_dtypes.bfloat16)        # B stored K-major
    m = machine(f"_start:\n        tmma.bf16_fp32 t0, t1, t2\n{EXIT}")
    set_tile(m, 1, a.tobytes())
    set_tile(m, 2, bt.tobytes())
    m.run(max_steps=100)
    got = np.frombuffer(tile_bytes(m, 0), dtype=np.float32).reshape(16, 16)
    want = (a.astype(np.float64) @ bt.astype(np.float64).T).astype(np.float32)
    assert np.array_equal(got, want)


def test_int8_mma_wraps_and_accumulates():
    a = RNG.integers(-128, 128, (16, 64), dtype=np.int8)
    bt = RNG.integers(-128, 128, (16, 64), dtype=np.int8)
    d = RNG.integers(-2**31, 2**31, (16, 16), dtype=np.int64).astype(np.int32)
    m = machine(f"_start:\n        tmma.s8_s8 t4, t5, t6, negd\n{EXIT}")
    for i, data in ((4, d), (5, a), (6, bt)):
        set_tile(m, i, data.tobytes())
    m.run(max_steps=100)
    want = (-d.astype(np.int64) + a.astype(np.int64) @ bt.astype(np.int64).T)
    want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert np.array_equal(np.frombuffer(tile_bytes(m, 4), dtype=np.int32).reshape(16, 16), want)


@pytest.mark.parametrize(("multitile", "extends"), [(0, "n"), (1, "m")])
def test_multitile_groups_and_memory_operands(multitile, extends):
    from tessera_tile.numerics.mma import mma

    flag = ", multitile" if multitile else ""
    m = machine(f"""_start:
        li a0, 0x1000
        tmma.s8_s8 t4, (a0), t8, ts=2{flag}
{EXIT}""")
    tiles = {i: _random_tile() for i in (4, 5, 8, 9)}
    shared = _random_tile() + _random_tile()
    for i, data in tiles.items():
        set_tile(m, i, data)
    m.tile.pes[0].shmem.write_bytes(0x1000, shared)
    m.run(max_steps=100)
    for i in range(2):
        a = shared[1024 * i:1024 * (i + 1)] if extends == "m" else shared[:1024]
        b = tiles[8 + i] if extends == "n" else tiles[8]
        assert tile_bytes(m, 4 + i) == mma(tiles[4 + i], a, b, MMAUOP["s8_s8"], row_bytes=64)


def test_mma_unknown_type_and_bad_groups():
    with pytest.raises(UnhandledTrap, match=r"unknown MMA data type \(mmauop 0x1f\)"):
        run(f"_start:\n        .ace W1.mma.mma_t{{td=0, ts1=1}}\n        .ace W0.mma_t{{ts2=2, mmauop=31}}\n{EXIT}")
    with pytest.raises(UnhandledTrap, match="td group t1 of 2 registers is not aligned"):
        run(f"_start:\n        tmma.s8_s8 t1, t2, t4, ts=2\n{EXIT}")


def test_talu_unary_binary_ternary_with_tmask_and_flags():
    from tessera_tile.numerics import talu

    a = np.linspace(-4, 4, 256, dtype=np.float32).tobytes()
    b = np.linspace(1, 2, 256, dtype=np.float32).tobytes()
    c = np.full(256, 0.5, dtype=np.float32).tobytes()
    old = bytes([0x11]) * 1024
    m = machine(f"""_start:
        talu1.abs t3, t1, neg1
        li t0, 0x0000ffff
        tcsrw zero, tmask, t0
        talu3.fma t4, t1, t2, t5, tmask
        tmv.vt v1, t2, 3
        talu2.mul t6, t1, v1, neg2
        talu1.rcp t7, t8                # 1/0 raises DZ
        tcsrr s1, tfflags
{EXIT}""")
    for i, data in ((1, a), (2, b), (5, c), (4, old)):
        set_tile(m, i, data)
    m.run(max_steps=100)
    assert tile_bytes(m, 3) == talu.unary(0x02, a, bytes(1024), fmt=0, trm=0, neg=True).data
    fma = talu.ternary(0x8, a, b, c, old, fmt=0, trm=0).data
    t4 = tile_bytes(m, 4)
    assert t4[:512] == fma[:512] and t4[512:] == old[512:]            # granules 16..31 masked off
    row = b[192:256]
    assert tile_bytes(m, 6) == talu.binary(0x02, a, row * 16, bytes(1024), fmt=0, trm=0, neg2=True).data
    assert m.agent("hart0").x[9] & 0x08                                # DZ accrued in tfflags


def test_talu_scalar_operand_is_converted_and_broadcast():
    from tessera_tile.numerics import talu

    a = np.arange(512, dtype=np.float16).tobytes()
    m = machine(f"""_start:
        tcsrwi zero, tfmt, 1            # fp16
        tmv.tf t9, f0, 0, ew=d          # (f0 = 0) just to exercise FPR moves
        talu2.add t2, t1, f3
{EXIT}""")
    set_tile(m, 1, a)
    m.tile.threads["hart0"].fpr[3] = 0xFFFF_FFFF_0000_0000 | np.float32(1.5).view(np.uint32).item()
    m.run(max_steps=100)
    want = talu.binary(0x00, a, np.full(512, 1.5, dtype=np.float16).tobytes(), bytes(1024), fmt=1, trm=0).data
    assert tile_bytes(m, 2) == want


def test_talu_unknown_op_and_type_are_illegal():
    with pytest.raises(UnhandledTrap, match="unknown TALU unary operation 0x3f"):
        run(f"_start:\n        .ace W1.talu.talu{{td=0, ts1=1, op_hi=15}}\n        .ace W0.talu_u{{op_lo=3}}\n{EXIT}")
    with pytest.raises(UnhandledTrap, match="src_type disagrees"):
        run(f"_start:\n        .ace W2.alu{{vec_en=1, func6=33, reg=1}}\n        .ace W1.talu.talu{{td=0, ts1=1}}\n"
            f"        .ace W0.talu_b{{src_type=0, vs2=1}}\n{EXIT}")


def test_layout_and_operand_settings():
    from tessera_tile.numerics.mma import mma

    a, b, d = _random_tile(), _random_tile(), _random_tile()
    src = f"_start:\n        tmma.s8_s8 t0, t1, t2\n{EXIT}"
    m = machine(src, config={"tile.mma_b_layout": "row-major"})
    for i, data in ((0, d), (1, a), (2, b)):
        set_tile(m, i, data)
    m.run(max_steps=100)
    assert tile_bytes(m, 0) == mma(d, a, b, MMAUOP["s8_s8"], trans_b=True, row_bytes=64)
    m = machine(f"_start:\n        tmma.s8_s8 t4, t6, t8, ts=2\n{EXIT}", config={"tile.multitile_extends": "m"})
    tiles = {i: _random_tile() for i in (4, 5, 6, 7, 8)}
    for i, data in tiles.items():
        set_tile(m, i, data)
    m.run(max_steps=100)                 # multitile=0 now extends M: A and D step, B fixed
    assert tile_bytes(m, 5) == mma(tiles[5], tiles[7], tiles[8], MMAUOP["s8_s8"], row_bytes=64)


def test_gpr_scalar_operand_setting():
    from tessera_tile.numerics import talu

    a = np.arange(256, dtype=np.int32).tobytes()
    m = machine(f"_start:\n        tcsrwi zero, tfmt, 5\n        li a3, -7\n        talu2.add t2, t1, f13\n{EXIT}",
                config={"tile.alu_scalar_source": "gpr"})      # f13 names register 13 of the GPRs: a3
    set_tile(m, 1, a)
    m.run(max_steps=100)
    want = talu.binary(0x00, a, np.full(256, -7, dtype=np.int32).tobytes(), bytes(1024), fmt=5, trm=0).data
    assert tile_bytes(m, 2) == want
