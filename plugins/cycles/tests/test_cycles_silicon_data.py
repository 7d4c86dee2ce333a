"""The shipped Blackhole silicon measurements (data/silicon, PROVENANCE.md) and their loader.

Every expected number below is quoted from a file's own ``#`` header (or, where marked,
from the upstream analysis the header points to) and recomputed here from the raw rows
by the loader, so a broken parser, a wrong slope or a changed file fails.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from tessera_cycles import silicon
from tessera_cycles.silicon import load, parse, r_squared, slope

TX_0809 = "tensixbench-blackhole-2026-08-09.csv"
TX_X1 = "tensixbench-blackhole.csv"
TX_CONTROL = "tensixbench-blackhole-dvalid-per-thread.csv"
FORMATS = ("bf16", "fp32", "fp16", "tf32")
RV_PRIMARY = "riscvbench-blackhole.csv"


def _files():
    from importlib import resources

    return resources.files("tessera_cycles").joinpath("data", "silicon")


def _provenance() -> dict[str, str]:
    """file name -> sha256, from the table of PROVENANCE.md."""
    text = _files().joinpath("PROVENANCE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| `[^`]+` \| `([0-9a-f]{64})` \|$", text, flags=re.M)
    return dict(rows)


def _cpi(ds, probe, variant="t1", thread=1, phase="A", control=True):
    return ds.cycles_per_instruction(probe, phase=phase, variant=variant, thread=thread, subtract_control=control)


# ----------------------------------------------------------------------------- the files


def test_every_dataset_loads_with_its_header_and_rows():
    names = silicon.datasets()
    # the 8 tensixbench and 13 riscvbench files of the wheel, nothing else (no noc*/dram*)
    assert len([n for n in names if n.startswith("tensixbench-")]) == 8
    assert len([n for n in names if n.startswith("riscvbench-")]) == 13
    for name in names:
        ds = load(name)
        assert ds.name == name
        assert ds.columns == ("phase", "variant", "probe_id", "probe", "unit", "active_threads", "thread",
                              "n", "unroll", "cycles")
        assert ds.rows and all(isinstance(r["cycles"], int) and r["cycles"] > 0 for r in ds.rows)
        # every header says it is silicon, and its last line is the benchmark's own record
        assert ds.meta["device"] == "blackhole-silicon" and ds.meta["simulator"] == "no"
        assert ds.record["arch"] == "blackhole" and ds.record["magic"].startswith("0x7B10C")
        assert not any(line.startswith("#") for line in ds.header)


def test_checksums_in_provenance_match_the_files():
    digests = _provenance()
    assert set(digests) == {*silicon.datasets(), "LICENSE.wolfpine"}
    for name, digest in digests.items():
        assert hashlib.sha256(_files().joinpath(name).read_bytes()).hexdigest() == digest, name


def test_the_licence_travels_with_the_data():
    text = _files().joinpath("LICENSE.wolfpine").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License") and "Copyright (c) 2025, Nick Brown" in text


def test_meta_reads_tokens_from_prose_and_the_record_line():
    ds = load(TX_0809)
    assert ds.meta["unroll"] == "64" and ds.meta["variants"] == "t1,t2,t3"
    assert ds.meta["fidelities"] == "LoFi,HiFi2,HiFi4" and ds.meta["dvalid_setup"] == "once"
    assert ds.meta["host"] == "nextgenio-amd02"                    # a prose line, not the record
    assert "host" not in ds.record
    # a token in backticks and one ending a sentence are read without the punctuation
    assert load(TX_CONTROL).meta["dvalid_setup"] == "per-thread"
    assert load("riscvbench-blackhole-2026-08-09-qdrain.csv").meta["n"] == "1024"
    # prose says phases=r,t,c,q,f,s,g, the record line phases=rtcqfsg: the record wins
    assert load(RV_PRIMARY).meta["phases"] == load(RV_PRIMARY).record["phases"] == "rtcqfsg"


def test_rows_are_typed_and_selectable():
    ds = load(TX_0809)
    rows = ds.rows_where(phase="A", variant="t1", probe="NOP", thread=1)
    # the raw NOP series the upstream analysis quotes as bit-identical across two runs
    # (docs/plans/cost-model.md, "The second rung-3 sample"): 2137/4235/6347/8459
    assert [(r["n"], r["cycles"]) for r in rows] == [(32, 2137), (64, 4235), (96, 6347), (128, 8459)]
    assert ds.values("variant", phase="B") == ["LoFi", "HiFi2", "HiFi4"]
    with pytest.raises(ValueError, match="no column nope"):
        ds.rows_where(nope=1)


# ----------------------------------------------------------------------------- facts


def test_0809_phase_a_single_thread_is_the_front_end_floor():
    ds = load(TX_0809)
    # slope/unroll without the control: 1.029 for NOP (header: "the front end's 1-IPC floor");
    # with the empty-loop control (2.00 cycles a block, /64) taken off: 0.998
    assert _cpi(ds, "NOP", control=False) == pytest.approx(1.03, abs=0.005)
    assert _cpi(ds, "NOP") == pytest.approx(0.998, abs=0.002)
    assert slope(ds.rows_where(phase="A", variant="t1", probe="loop_overhead", thread=1))[0] == pytest.approx(2.0)
    # the four THCON ops read 3 (2.973 after the control, cost-model.md "sixteen probes corroborate")
    for probe in ("ADDDMAREG", "MULDMAREG", "SHIFTDMAREG", "CMPDMAREG"):
        assert _cpi(ds, probe, control=False) == pytest.approx(3.0, abs=0.01)
        assert _cpi(ds, probe) == pytest.approx(2.973, abs=0.002)
    # header: "Phase A t1 here is ... bit-identical to its own NOP series"
    nop = [r["cycles"] for r in ds.rows_where(phase="A", variant="t1", probe="NOP")]
    assert [r["cycles"] for r in ds.rows_where(phase="A", variant="t1", probe="MVMUL")] == nop


def test_matrix_probes_six_twelve_eighteen_in_x1_and_not_in_the_control():
    # tensixbench-blackhole.csv header: MVMUL/ELWADD/ELWMUL ~6 / 12 / 18 cycles per instruction
    # at one / two / three threads, i.e. ~6.0 cycles aggregate throughout
    x1 = load(TX_X1)
    for probe in ("MVMUL", "ELWADD", "ELWMUL"):
        for k, variant in enumerate(("t1", "t2", "t3"), start=1):
            per_thread = [_cpi(x1, probe, variant, t) for t in x1.values("thread", phase="A", variant=variant)]
            assert len(per_thread) == k
            assert all(c == pytest.approx(6.0 * k, abs=0.05) for c in per_thread), (probe, variant)
    # the dvalid-per-thread control's header: 1.00 / 6.08 / 12.10 for MVMUL
    ctl = load(TX_CONTROL)
    assert [_cpi(ctl, "MVMUL", v, 1) for v in ("t1", "t2", "t3")] == pytest.approx([1.00, 6.08, 12.10], abs=0.01)


def test_source_format_axis_is_flat_and_the_null_pair_identical():
    # the unpacr-nop headers: MVMUL 5.988 / 5.988 / 5.988 / 5.989 across bf16 / fp32 / fp16 / tf32,
    # and bf16 vs fp32 (same SrcAStyle) "exactly 0.000 on all three MATH probes"
    runs = {f: load(f"tensixbench-blackhole-unpacr-nop-{f}.csv") for f in FORMATS}
    for f, ds in runs.items():
        assert ds.meta["src_format"] == f and ds.meta["dvalid_setup"] == "unpacr-nop"
        assert _cpi(ds, "MVMUL") == pytest.approx(5.988, abs=0.0015)
    for probe in ("MVMUL", "ELWADD", "ELWMUL"):
        assert _cpi(runs["bf16"], probe) == _cpi(runs["fp32"], probe)


def test_phase_b_fidelity_steps():
    # phase B: cycles per matmul_tiles on the math thread; upstream docs/bh_arch.md §2.3/§2.5
    # read 34.92 / 52.47 / 86.12 and a marginal MVMUL of (HiFi4 - LoFi) / 48 = 1.067
    x1 = load(TX_X1)
    per_call = {f: slope(x1.rows_where(phase="B", variant=f, thread=1))[0] for f in ("LoFi", "HiFi2", "HiFi4")}
    assert per_call == pytest.approx({"LoFi": 34.92, "HiFi2": 52.47, "HiFi4": 86.12}, abs=0.01)
    assert (per_call["HiFi4"] - per_call["LoFi"]) / 48 == pytest.approx(1.067, abs=0.001)
    assert all(r_squared(x1.rows_where(phase="B", variant=f, thread=1)) > 0.99 for f in per_call)


def test_riscvbench_live_instrument_probes():
    # riscvbench-blackhole.csv header, the continuity table: rv_div 33.001, rv_load_chase 8.094,
    # rv_mul_dep 1.985, tt_adddmareg 2.972, f_2048 1.251, rv_store_spread 5.290
    ds = load(RV_PRIMARY)
    expected = {("r", "rv_div"): 33.001, ("r", "rv_load_chase"): 8.094, ("r", "rv_mul_dep"): 1.985,
                ("t", "tt_adddmareg"): 2.972, ("f", "f_2048"): 1.251, ("r", "rv_store_spread"): 5.290}
    for (phase, probe), value in expected.items():
        assert _cpi(ds, probe, phase=phase) == pytest.approx(value, abs=0.001), probe


def test_queue_drain_burst_matches_its_header():
    # riscvbench-qdrain.csv header, "MEASURED" row for q_loop_adddmareg at n = 16 .. 1024
    ds = load("riscvbench-qdrain.csv")
    rows = ds.rows_where(phase="q", variant="t1", probe="q_loop_adddmareg", thread=1)
    assert [r["n"] for r in rows] == [16, 32, 64, 128, 256, 512, 1024]
    assert [r["cycles"] for r in rows] == [28, 48, 107, 299, 683, 1451, 2987]
    # past the knee each instruction costs the drained 3.000 (header: "reaches exactly 3.00")
    assert slope(rows[3:])[0] == pytest.approx(3.0)


# ----------------------------------------------------------------------------- strictness


GOOD = "# device=x unroll=2\nphase,n,unroll,cycles\nA,1,2,10\nA,2,2,14\n"


def test_parse_reads_a_minimal_file():
    ds = parse(GOOD, "mini.csv")
    assert ds.meta == {"device": "x", "unroll": "2"} and ds.rows[1] == {"phase": "A", "n": 2, "unroll": 2, "cycles": 14}
    assert slope(ds.rows) == pytest.approx((4.0, 6.0))


@pytest.mark.parametrize(("text", "line", "what"), [
    ("# a\nphase,n\nA,1,2\n", 3, "3 fields where the header has 2"),
    ("phase,n\nA,1\n# late\n", 3, "comment line after the data began"),
    ("phase,cycles\nA,1.5\n", 2, "cycles is '1.5', not an integer"),
    ("phase,n\n\nA,1\n", 2, "blank line"),
    ("#bad\nphase,n\nA,1\n", 1, "comment line does not start with '# '"),
    ("phase,n\nA,\n", 2, "empty n"),
    ("phase,phase\nA,B\n", 1, "repeated column name"),
])
def test_malformed_files_name_the_file_and_line(text, line, what):
    with pytest.raises(ValueError, match=re.escape(f"bad.csv, line {line}: {what}")):
        parse(text, "bad.csv")


def test_files_without_columns_or_rows_are_refused():
    with pytest.raises(ValueError, match="bad.csv: no column header line"):
        parse("# only\n", "bad.csv")
    with pytest.raises(ValueError, match="bad.csv: no data rows"):
        parse("phase,n\n", "bad.csv")


def test_unknown_dataset_and_degenerate_fits_are_refused():
    with pytest.raises(ValueError, match="no silicon dataset 'nocbench-blackhole.csv'"):
        load("nocbench-blackhole.csv")
    with pytest.raises(ValueError, match="two distinct n"):
        slope([{"n": 4, "cycles": 1}, {"n": 4, "cycles": 2}])
    ds = load(TX_X1)
    with pytest.raises(ValueError, match="more than one series"):
        ds.cycles_per_instruction("NOP", phase="A")          # t1, t2, t3 all at once
