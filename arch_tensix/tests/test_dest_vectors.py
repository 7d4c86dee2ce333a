"""Bit-exact agreement with every record of shared/reference/vectors/sfpload_sfpstore_conv_bh.jsonl.

Each record is a per-lane conversion.  Records are run 32 at a time through real
SFPLOAD / SFPSTORE instruction words: one record per lane, its Dest cell placed where
that lane's address points (Dst16b, or the two halves of the Dst32b cell).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from tensix_dest_support import Thread, execute, load_jsonl, sfpload, sfpstore, shared_reference

from tessera_tensix import dest as D

ADDR = 0x24                       # rows 36..39, even columns: neither at 0 nor in the first face


def _groups() -> dict[tuple[str, int], list[dict]]:
    recs = load_jsonl(shared_reference() / "vectors" / "sfpload_sfpstore_conv_bh.jsonl")
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in recs:
        groups[(r["insn"], r["mod0"])].append(r)
    return groups


def _cells(addr: int) -> tuple[list[int], list[int]]:
    rows = [(addr & ~3) + (lane >> 3) for lane in range(32)]
    cols = [2 * (lane & 7) + ((addr >> 1) & 1) for lane in range(32)]
    return rows, cols


def test_vector_file_is_complete():
    groups = _groups()
    assert sum(len(v) for v in groups.values()) == 11379
    assert {m for (i, m) in groups if i == "SFPLOAD"} == set(range(1, 16))
    assert {m for (i, m) in groups if i == "SFPSTORE"} == set(range(1, 16))


def _run_load(mod0: int, recs: list[dict]) -> int:
    mismatches = 0
    rows, cols = _cells(ADDR)
    for start in range(0, len(recs), 32):
        chunk = recs[start:start + 32]
        t = Thread()
        n = len(chunk)
        for lane, r in enumerate(chunk):
            if mod0 in D.LOAD_32:
                v = int(r["d32"], 16)
                p = D.adj32(rows[lane], False, False)
                t.dest.bits[p, cols[lane]] = v >> 16
                t.dest.bits[p + 8, cols[lane]] = v & 0xFFFF
            else:
                t.dest.bits[rows[lane], cols[lane]] = int(r["d16"], 16)
            t.sfpu.lreg[3, lane] = int(r.get("lreg_before", "0"), 16)
            if r.get("ENABLE_FP16A_INF"):
                t.sfpu.lane_config[lane] |= 1
        execute(t, sfpload(3, mod0, 0, ADDR))
        got = t.sfpu.lreg[3, :n]
        want = np.array([int(r["lreg"], 16) for r in chunk], dtype=np.uint32)
        mismatches += int((got != want).sum())
    return mismatches


def _run_store(mod0: int, recs: list[dict]) -> int:
    mismatches = 0
    rows, cols = _cells(ADDR)
    for start in range(0, len(recs), 32):
        chunk = recs[start:start + 32]
        t = Thread()
        n = len(chunk)
        t.sfpu.lreg[5, :n] = [int(r["lreg"], 16) for r in chunk]
        execute(t, sfpstore(5, mod0, 0, ADDR))
        for lane, r in enumerate(chunk):
            if mod0 in D.STORE_32:
                p = D.adj32(rows[lane], False, False)
                got = (int(t.dest.bits[p, cols[lane]]) << 16) | int(t.dest.bits[p + 8, cols[lane]])
                want = int(r["d32"], 16)
            else:
                got = int(t.dest.bits[rows[lane], cols[lane]])
                want = int(r["d16"], 16)
            mismatches += got != want
    return mismatches


@pytest.mark.parametrize("mod0", range(1, 16))
def test_sfpload_records_bit_exact(mod0):
    recs = _groups()[("SFPLOAD", mod0)]
    assert recs
    assert _run_load(mod0, recs) == 0


@pytest.mark.parametrize("mod0", range(1, 16))
def test_sfpstore_records_bit_exact(mod0):
    recs = _groups()[("SFPSTORE", mod0)]
    assert recs
    assert _run_store(mod0, recs) == 0


def test_conversion_helpers_match_every_record():
    """The vectorised helpers alone, over the whole file at once per mode."""
    for (insn, mod0), recs in _groups().items():
        if insn == "SFPLOAD":
            key = "d32" if mod0 in D.LOAD_32 else "d16"
            src = np.array([int(r[key], 16) for r in recs], dtype=np.uint32)
            old = np.array([int(r.get("lreg_before", "0"), 16) for r in recs], dtype=np.uint32)
            inf = np.array([bool(r.get("ENABLE_FP16A_INF")) for r in recs])
            got = D.load_convert(mod0, None if key == "d32" else src, src if key == "d32" else None,
                                 old, inf)
            want = np.array([int(r["lreg"], 16) for r in recs], dtype=np.uint32)
        else:
            x = np.array([int(r["lreg"], 16) for r in recs], dtype=np.uint32)
            got = D.store_convert(mod0, x)
            key = "d32" if mod0 in D.STORE_32 else "d16"
            want = np.array([int(r[key], 16) for r in recs], dtype=np.uint32)
        assert np.array_equal(got, want), (insn, mod0)


def test_a_wrong_conversion_would_be_caught():
    """Guard against a vacuous comparison: flipping one bit of one expected value fails."""
    recs = [dict(r) for r in _groups()[("SFPSTORE", 2)][:32]]
    recs[7]["d16"] = f"{int(recs[7]['d16'], 16) ^ 1:#06x}"
    assert _run_store(2, recs) == 1
