"""Resume: the same batch again skips what the results file holds, reruns what changed, and
shrugs off a last line a kill cut short; the end result equals an uninterrupted batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tessera.batch import read_results, run_batch
from tessera.errors import ConfigError

from .conftest import batch_lines, untimed, write_batch


def test_a_partial_results_file_with_a_cut_short_line_is_completed(programs, toy_host):
    batch = write_batch(programs / "runs.jsonl", batch_lines())
    run_batch(batch, "full.jsonl", workers=2, host=toy_host, progress=False)
    full = (programs / "full.jsonl").read_text().splitlines()
    kept = 4
    cut = full[kept][: len(full[kept]) // 2]                 # a write a kill interrupted
    (programs / "part.jsonl").write_text("\n".join(full[:kept]) + "\n" + cut)
    notes: list[str] = []
    summary = run_batch(batch, "part.jsonl", workers=2, host=toy_host, progress=False, on_note=notes.append)
    assert (summary.skipped, summary.ran, summary.truncated) == (kept, len(full) - kept, True)
    assert notes == ["part.jsonl: dropped a last line cut short by an interrupted write; that run is done again"]
    text = (programs / "part.jsonl").read_text()
    assert text.startswith("\n".join(full[:kept]) + "\n")    # the done runs untouched, not run again
    assert all(json.loads(line) for line in text.splitlines())
    assert untimed(read_results("part.jsonl")) == untimed(read_results("full.jsonl"))
    again = run_batch(batch, "part.jsonl", workers=2, host=toy_host, progress=False)
    assert (again.ran, again.skipped, again.outcomes) == (0, len(full), summary.outcomes)


def test_a_changed_spec_is_run_again_and_said_so(programs, toy_host):
    lines = batch_lines()
    batch = write_batch(programs / "runs.jsonl", lines)
    run_batch(batch, "out.jsonl", workers=1, host=toy_host, progress=False)
    before = read_results("out.jsonl")
    lines[3]["max_steps"] = 200                              # "spin": a new budget
    write_batch(batch, lines)
    notes: list[str] = []
    summary = run_batch(batch, "out.jsonl", workers=1, host=toy_host, progress=False, on_note=notes.append)
    assert (summary.ran, summary.rerun) == (1, ("spin",))
    assert notes == [f"{batch}:4: the spec of 'spin' changed since its result was written: running it again"]
    after = read_results("out.jsonl")
    assert after["spin"]["steps"] == 200 != before["spin"]["steps"]
    ids = [json.loads(line)["id"] for line in (programs / "out.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(before) and ids[-1] == "spin"   # one line per id, the new one last


def test_a_changed_program_is_run_again(programs, toy_host):
    lines = [{"id": "s", "program": "sum.s", "arch": "toy", "set": {"cores": 1}}]
    run_batch(lines, "out.jsonl", workers=1, host=toy_host, progress=False)
    (programs / "sum.s").write_text((programs / "sum.s").read_text().replace("li    r2, 10", "li    r2, 3"))
    summary = run_batch(lines, "out.jsonl", workers=1, host=toy_host, progress=False, quiet=True)
    assert summary.rerun == ("s",) and read_results("out.jsonl")["s"]["exit_code"] == 6


def test_results_of_other_runs_are_kept(programs, toy_host):
    other = {"id": "elsewhere", "spec_hash": "0" * 64, "outcome": "halted"}
    (programs / "out.jsonl").write_text(json.dumps(other) + "\n")
    run_batch([{"id": "s", "program": "sum.s", "arch": "toy"}], "out.jsonl", workers=1, host=toy_host,
              progress=False)
    assert set(read_results("out.jsonl")) == {"elsewhere", "s"}


def test_a_file_that_is_not_a_results_file_is_left_alone(programs, toy_host):
    text = '{"id": "a", "spec_hash": "x"}\nnot json at all\n{"id": "b", "spec_hash": "y"}\n'
    (programs / "out.jsonl").write_text(text)
    with pytest.raises(ConfigError, match=r"out.jsonl:2: not a result line of tessera batch"):
        run_batch([{"program": "sum.s", "arch": "toy"}], "out.jsonl", host=toy_host, progress=False)
    assert (programs / "out.jsonl").read_text() == text
    with pytest.raises(ConfigError, match="is the batch file itself"):
        run_batch(str(write_batch(programs / "runs.jsonl", batch_lines())), "runs.jsonl", host=toy_host)


def _worker_pids(parent: int) -> list[int]:
    """The batch workers ``parent`` started (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"tessera.batch.worker" in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_a_batch_killed_with_sigkill_resumes_to_the_same_results(programs, toy_host):
    lines = [{"id": f"spin{n}", "program": "spin.s", "arch": "toy", "set": {"cores": 1},
              "max_steps": 800_000 + n} for n in range(10)]
    batch = write_batch(programs / "runs.jsonl", lines)
    env = {**os.environ, "TESSERA_PLUGINS": "toy"}
    command = [sys.executable, "-m", "tessera.cli.main", "batch", str(batch), "-o", "killed.jsonl",
               "--workers", "1", "--quiet"]
    proc = subprocess.Popen(command, env=env)
    out = programs / "killed.jsonl"
    deadline = time.monotonic() + 30
    while (not out.exists() or out.read_text().count("\n") < 3) and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = _worker_pids(proc.pid)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    assert workers, "the batch had a worker"
    deadline = time.monotonic() + 5                          # workers die with the batch
    while any(os.path.exists(f"/proc/{pid}") and "Z" not in _state(pid) for pid in workers) \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}") and "Z" not in _state(pid)]
    done = len(read_results(str(out)))
    assert 3 <= done < len(lines)
    summary = run_batch(batch, str(out), workers=2, host=toy_host, progress=False)
    assert (summary.skipped, summary.ran) == (done, len(lines) - done)
    run_batch(batch, "straight.jsonl", workers=2, host=toy_host, progress=False)
    assert untimed(read_results(str(out))) == untimed(read_results("straight.jsonl"))


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
