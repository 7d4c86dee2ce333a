"""``tessera batch``: exit statuses, one-line errors, the summary, ``-o -``, Ctrl-C and going on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tessera.batch import read_results
from tessera.batch.cli import default_output
from tessera.batch.progress import BatchProgress
from tessera.cli.main import main

from .conftest import batch_lines, write_batch


@pytest.fixture
def tessera(capsys, monkeypatch):
    """``tessera(*args) -> (exit status, stdout, stderr)``, in this process, toy plugin only."""
    for name in [n for n in os.environ if n.startswith("TESSERA_") and n != "TESSERA_ENGINE"]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TESSERA_PLUGINS", "toy")

    def run(*args: str) -> tuple[object, str, str]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main(list(args))
        out, err = capsys.readouterr()
        return exc.value.code, out, err

    return run


def test_a_batch_exits_0_and_says_how_it_went_in_one_line(programs, tessera):
    write_batch(programs / "runs.jsonl", batch_lines())
    code, out, err = tessera("batch", "runs.jsonl", "--workers", "2")
    results = read_results("runs.results.jsonl")          # the default output, beside the batch
    assert code == 0 and out == "" and len(results) == len(batch_lines())
    (line,) = err.splitlines()
    counts = {}
    for r in results.values():
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    assert line.startswith(f"batch: {len(results)} runs: {shown}; results in runs.results.jsonl (")
    code, out, err = tessera("batch", "runs.jsonl", "--quiet")   # everything done: nothing runs
    assert (code, out, err) == (0, "", "")


def test_results_to_stdout(programs, tessera):
    write_batch(programs / "runs.jsonl", batch_lines()[:3])
    code, out, err = tessera("batch", "runs.jsonl", "-o", "-", "-q", "--workers", "1")
    assert code == 0 and err == ""
    assert sorted(json.loads(line)["id"] for line in out.splitlines()) == ["sum-1", "sum-2", "sum-step"]
    assert not (programs / "runs.results.jsonl").exists()


@pytest.mark.parametrize(("line", "code", "words"), [
    ('{"program": "sum.s", "arch": "toy", "max_step": 5}', 64,
     "configuration error: runs.jsonl:2: unknown key 'max_step' (did you mean 'max_steps'?)"),
    ('{"program": "gone.s", "arch": "toy"}', 65, "load error: runs.jsonl:2: program gone.s does not exist"),
    ('{"program": "sum.s", "arch": "mips"}', 64, "configuration error: runs.jsonl:2: unknown architecture 'mips'"),
    ('{"program": "sum.s", "arch": "toy"', 64, "configuration error: runs.jsonl:2: not valid JSON"),
])
def test_a_bad_line_stops_the_batch_before_anything_runs(programs, tessera, line, code, words):
    (programs / "runs.jsonl").write_text('{"program": "sum.s", "arch": "toy"}\n' + line + "\n")
    got, out, err = tessera("batch", "runs.jsonl")
    assert (got, out) == (code, "")
    assert err.splitlines() == [f"tessera: {err.splitlines()[0][len('tessera: '):]}"] and words in err
    assert not (programs / "runs.results.jsonl").exists()


def test_usage_and_setup_errors(programs, tessera, monkeypatch):
    write_batch(programs / "runs.jsonl", batch_lines()[:1])
    code, _, err = tessera("batch", "missing.jsonl")
    assert code == 65 and err == "tessera: load error: batch file missing.jsonl does not exist\n"
    code, _, err = tessera("batch", "runs.jsonl", "--workers", "0")
    assert code == 2 and err.startswith("tessera: usage error: Invalid value for '--workers'")
    code, _, err = tessera("batch", "runs.jsonl", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and "--workers is for the local pool" in err
    monkeypatch.setitem(sys.modules, "distributed", None)    # as if tessera[dask] were not installed
    code, _, err = tessera("batch", "runs.jsonl", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 64 and err.splitlines() == [
        "tessera: configuration error: a Dask cluster needs the distributed package, which is not "
        "installed: pip install 'tessera[dask]'"]


def test_ctrl_c_stops_the_batch_and_the_same_command_goes_on(programs):
    lines = batch_lines()[:2] + [{"id": "long", "program": "spin.s", "arch": "toy", "set": {"cores": 1},
                                  "max_steps": 0}]           # unlimited: runs until interrupted
    write_batch(programs / "runs.jsonl", lines)
    env = {**os.environ, "TESSERA_PLUGINS": "toy"}
    command = [sys.executable, "-m", "tessera.cli.main", "batch", "runs.jsonl", "--workers", "1"]
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    out = programs / "runs.results.jsonl"
    deadline = time.monotonic() + 30
    while (not out.exists() or out.read_text().count("\n") < 2) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)                                          # the long run is under way
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert err.splitlines() == ["interrupted; finished runs are in runs.results.jsonl: run the same command "
                                "again to go on"]
    assert sorted(read_results(str(out))) == ["sum-1", "sum-2"]
    lines[2]["max_steps"] = 1000
    write_batch(programs / "runs.jsonl", lines)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "(2 done before)" in done.stderr
    assert read_results(str(out))["long"]["steps"] == 1000


def test_the_progress_bar_counts_outcomes():
    with BatchProgress(3, enabled=True, skipped=1) as bar:
        for outcome in ("halted", "budget", "halted"):
            bar.advance(outcome)
        assert bar._counts() == "budget 1, halted 2 · 1 done before"
    assert BatchProgress(3).enabled is sys.stderr.isatty()  # by default: only on a terminal


def test_the_default_output_is_beside_the_batch():
    assert default_output("dir/runs.jsonl") == "dir/runs.results.jsonl"
    assert default_output("sweep") == "sweep.results.jsonl"


@pytest.mark.parametrize("address", ["x", "", "{}", "tcp://", "tcp://host", "tcp://127.0.0.1:99999", "tcp://é:1",
                                     "http://127.0.0.1:8786"])
def test_a_malformed_scheduler_address_is_a_usage_error_before_dask_sees_it(programs, tessera, address):
    # Dask answers some of these with a ValueError of its own (once an internal error here)
    # and in-process it could leave its event loop waiting: they never reach it
    write_batch(programs / "runs.jsonl", batch_lines()[:1])
    code, _, err = tessera("batch", "runs.jsonl", "--scheduler", address)
    assert code == 2 and err.startswith("tessera: usage error: Invalid value for '--scheduler'"), err
    assert len(err.splitlines()) == 1


def test_well_formed_scheduler_addresses_pass_the_check():
    from tessera.batch.backends import check_address

    for address in ("tcp://127.0.0.1:8786", "tcp://head:8786", "tls://node-1.example.org:8786", "head:8786",
                    "tcp://[::1]:8786"):
        assert check_address(address) is None, address
