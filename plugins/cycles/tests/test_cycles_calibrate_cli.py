"""``tessera cycles calibrate``: the silicon comparison from the command line."""

from __future__ import annotations

import json
import os

import pytest

from tessera.cli.main import main


@pytest.fixture
def calibrate(monkeypatch, capsys):
    """``calibrate(*args) -> (exit status, stdout, stderr)`` of ``tessera cycles calibrate``."""
    for key in list(os.environ):
        if key.startswith("TESSERA_") and key != "TESSERA_ENGINE":
            monkeypatch.delenv(key)

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_:
            main(["cycles", "calibrate", *args])
        out, err = capsys.readouterr()
        return exit_.value.code, out, err

    return run


def test_markdown_has_a_row_per_point_and_the_count(calibrate):
    code, out, err = calibrate("--suite", "riscv-c", "--base", "4", "--format", "markdown")
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("| riscvbench")]
    assert len(rows) == 7 * 3                         # seven branch probes, t1..t3
    assert "tracked points within 10 % of silicon" in out


def test_json_carries_both_figures_and_the_error(calibrate):
    code, out, _err = calibrate("--suite", "riscv-c", "--base", "4", "--format", "json")
    assert code == 0
    c_nt = next(r for r in json.loads(out) if r["probe"] == "c_nt" and r["variant"] == "t1")
    assert c_nt["error_pct"] == pytest.approx(100 * (c_nt["tessera"] - c_nt["silicon"]) / c_nt["silicon"])


def test_a_parameter_changes_the_comparison_and_check_fails_on_a_miss(calibrate):
    code, out, _err = calibrate("--suite", "riscv-c", "--base", "4", "--check")
    assert code == 0                                   # every branch point is within 10 %
    code, out, _err = calibrate("--suite", "riscv-r", "--base", "4", "--format", "json")
    rows = {(r["probe"], r["variant"]): r for r in json.loads(out)}
    assert rows["rv_div", "t1"]["within"] is True
    code, out, err = calibrate("--suite", "riscv-r", "--base", "4", "--set", "cycles.div_cycles=50", "--format",
                               "json", "--check")
    assert code == 79 and err.count("\n") == 1 and "outside 10 % of silicon" in err
    slow = {(r["probe"], r["variant"]): r for r in json.loads(out)}
    assert slow["rv_div", "t1"]["within"] is False and slow["rv_div", "t1"]["tessera"] > 45


@pytest.mark.parametrize("args, code, message", [
    (["--suite", "nope"], 2, "unknown suite 'nope'"),
    (["--suite", "riscv-c", "--set", "cycles.fifo_depth"], 2, "expected cycles.NAME=VALUE"),
    (["--suite", "riscv-c", "--base", "1", "--set", "cycles.l1_contention=maybe"], 64, "l1_contention"),
    (["--suite", "riscv-c", "--base", "4", "--set", "cycles.fifo_depth=99"], 64, "fifo_depth must be at most 32"),
])
def test_bad_input_is_one_line(calibrate, args, code, message):
    got, _out, err = calibrate(*args)
    assert got == code and message in err and err.count("\n") == 1


def test_a_setting_may_be_a_switch_or_a_text_as_in_tessera_run(calibrate):
    # booleans and texts reach the model as `tessera run --set` gives them: three cores on
    # one L1 port load slower than with L1 to themselves
    figures = []
    for extra in ((), ("--set", "cycles.l1_contention=false")):
        code, out, _err = calibrate("--suite", "riscv-r", "--base", "2", "--set", "cycles.l1_ports=trisc0 trisc1 trisc2",
                                    *extra, "--format", "json")
        assert code == 0
        rows = {(r["probe"], r["variant"]): r for r in json.loads(out)}
        figures.append(rows["rv_load_indep", "t3"]["tessera"])
    shared, alone = figures
    assert shared > alone + 0.5
