"""Fault-injection campaigns: the file, the fault list, the outcome classes, workers, resume.

The program is a checksum over sixteen words (1..16, exit status 136) that exits 3 when
the sum exceeds 1000 — the program noticing corruption.  Explicit faults give each
outcome class on purpose; sampled campaigns check determinism, resume and fast-forward.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from faults_support import host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.errors import ConfigError, LoadError
from tessera_faults.campaign import Campaign, leveugle_sample_size, prepare, run_campaign
from tessera_faults.spec import Fault

CHECKSUM = """
    la   s0, data
    li   s1, 16
    li   a0, 0
loop:
    lw   t1, 0(s0)
    add  a0, a0, t1
    addi s0, s0, 4
    addi s1, s1, -1
    bnez s1, loop
    li   t2, 1000
    bgtu a0, t2, bad
    li   a7, 93
    ecall
bad:
    li   a0, 3
    li   a7, 93
    ecall
    .align 4
data:
    .word 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
"""

#: faults chosen to give each outcome (steps count from 0: `la` is two instructions)
EXPLICIT = {
    "target=mem[data],bit=0,at=step:0": "sdc",          # 1 -> 0: the sum is 135
    "target=mem[data+5],bit=4,at=step:0": "detected",   # 2 -> 4098: the sum passes 1000, exit 3
    "target=s0,bit=31,at=step:2": "crash",              # the pointer leaves RAM: a load fault
    "target=s1,bit=20,at=step:3": "hang",               # 2**20 more rounds: past the budget
    "target=x26,bit=5,at=step:10": "latent",            # a register the program never reads
    "target=t1,bit=3,at=step:3": "masked",              # t1 is loaded before it is read
    "model=skip,at=pc:0x90000": "not-injected",         # that address never runs
}

IGNORED = ("seconds",)


def write_program(tmp_path: Path) -> Path:
    path = tmp_path / "checksum.s"
    path.write_text(CHECKSUM)
    return path


def campaign(tmp_path: Path, **faults: Any) -> Campaign:
    run = faults.pop("run", {})
    outputs = faults.pop("outputs", {"detected": [3]})
    data = {"name": "checksum", "seed": faults.pop("seed", 7),
            "program": {"program": str(write_program(tmp_path)), "arch": "rv32im", "set": {"ram": "1M"}},
            "outputs": outputs, "faults": faults, "run": run}
    return Campaign.from_dict(data, base_dir=str(tmp_path), source="test.toml")


def results(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        out[record["id"]] = {k: v for k, v in record.items() if k not in IGNORED}
    return out


# ------------------------------------------------------------------ sampling


def test_leveugle_sample_sizes_follow_the_formula():
    # e = 5 %, 95 %: t = 1.96, n0 = t^2 p(1-p) / e^2 = 384.16; finite N: N / (1 + (N-1)/n0 ... )
    assert leveugle_sample_size(10**12, 0.05, 0.95) == 385
    assert leveugle_sample_size(1000, 0.05, 0.95) == 278       # 1000 / (1 + 0.0025*999/0.9604) = 277.7
    assert leveugle_sample_size(10**12, 0.01, 0.99) == 16588   # 2.5758^2 * 0.25 / 0.0001 = 16587.2
    assert leveugle_sample_size(50, 0.01, 0.99) == 50          # never more than the population
    assert leveugle_sample_size(0, 0.05, 0.95) == 0


def test_a_statistical_campaign_samples_each_population_by_the_formula(tmp_path):
    c = campaign(tmp_path, targets=["hart0.x", "mem.ram[data:+64]"], models=["flip", "zero"],
                 sampling="statistical", margin=0.1, confidence=0.9)
    ready = prepare(c, host=host())
    pops = {p["name"]: p for p in ready.populations}
    assert set(pops) == {"hart0.x/flip", "hart0.x/zero", "mem.ram[data:+64]/flip", "mem.ram[data:+64]/zero"}
    steps = ready.golden.steps
    assert pops["hart0.x/flip"]["size"] == 31 * 32 * steps      # x0 is hard-wired: 31 registers
    assert pops["hart0.x/zero"]["size"] == 31 * steps            # one value per register
    assert pops["mem.ram[data:+64]/flip"]["size"] == 64 * 8 * steps
    for pop in pops.values():
        assert pop["sampled"] == leveugle_sample_size(pop["size"], 0.1, 0.9)
    assert len(ready.faults) == sum(p["sampled"] for p in pops.values())
    again = prepare(c, host=host()).faults
    assert [f.text for f in again] == [f.text for f in ready.faults]  # the same seed, the same list


def test_another_seed_gives_another_fault_list(tmp_path):
    a = prepare(campaign(tmp_path, targets=["hart0.x"], sampling="random", count=20, seed=1), host=host())
    b = prepare(campaign(tmp_path, targets=["hart0.x"], sampling="random", count=20, seed=2), host=host())
    assert len(a.faults) == len(b.faults) == 20
    assert {f.text for f in a.faults} != {f.text for f in b.faults}


def test_exhaustive_sampling_enumerates_the_window_and_refuses_a_huge_space(tmp_path):
    c = campaign(tmp_path, targets=["hart0.x[10:11]"], sampling="exhaustive", window=[5, 7])
    ready = prepare(c, host=host())
    assert len(ready.faults) == 2 * 32        # two steps x 32 bits of a0
    assert {f.step for f in ready.faults} == {5, 6}
    with pytest.raises(ConfigError, match=r"exhaustive sampling would inject [0-9,]+ faults \(run.max_faults"):
        prepare(campaign(tmp_path, targets=["mem.ram"], sampling="exhaustive"), host=host())


def test_class_populations_count_the_golden_runs_executions(tmp_path):
    ready = prepare(campaign(tmp_path, classes=["load"], sampling="exhaustive"), host=host())
    assert ready.golden.class_counts == {"load": 16}
    triggers = [Fault.parse(f.text).trigger for f in ready.faults]
    assert {t.kind for t in triggers} == {"class"} and sorted(t.count for t in triggers) == list(range(1, 17))


# ------------------------------------------------------------------ outcomes


def test_each_outcome_class_is_recognised(tmp_path):
    c = campaign(tmp_path, faults=list(EXPLICIT))
    out = tmp_path / "r.jsonl"
    summary = run_campaign(c, out, workers=1, host=host(), progress=False)
    got = results(out)
    assert {f: got[f]["outcome"] for f in EXPLICIT} == EXPLICIT
    assert summary.outcomes == {name: 1 for name in EXPLICIT.values()}
    assert got["target=mem[data],bit=0,at=step:0"]["differs"] == ["exit"]
    crash = got["target=s0,bit=31,at=step:2"]
    assert crash["error"] and crash["old"] ^ crash["new"] == 1 << 31
    assert got["target=s1,bit=20,at=step:3"]["steps"] >= int(summary.golden_steps * 2)
    meta = json.loads(Path(f"{out}.campaign.json").read_text())
    assert meta["golden"]["steps"] == summary.golden_steps and meta["golden"]["exit"] == 136


# ------------------------------------------------------------------ execution


def test_the_same_campaign_gives_the_same_results_on_one_and_two_workers(tmp_path):
    c = campaign(tmp_path, targets=["hart0.x", "mem.ram[data:+64]"], sampling="random", count=25)
    run_campaign(c, tmp_path / "one.jsonl", workers=1, host=host(), progress=False)
    run_campaign(c, tmp_path / "two.jsonl", workers=2, host=host(), progress=False)
    one, two = results(tmp_path / "one.jsonl"), results(tmp_path / "two.jsonl")
    assert len(one) == 50 and one == two
    assert len({r["outcome"] for r in one.values()}) >= 3  # a sample that tells outcomes apart


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 15), snapshots=st.integers(0, 40))
def test_any_campaign_gives_the_same_results_on_one_and_two_workers(tmp_path_factory, seed, count, snapshots):
    where = tmp_path_factory.mktemp("campaign")
    c = campaign(where, targets=["hart0.x", "mem.ram[data:+64]"], models=["flip", "random"], sampling="random",
                 count=count, seed=seed, run={"snapshots": snapshots})
    run_campaign(c, where / "one.jsonl", workers=1, host=host(), progress=False)
    run_campaign(c, where / "two.jsonl", workers=2, host=host(), progress=False)
    one = results(where / "one.jsonl")
    assert len(one) == 4 * count and one == results(where / "two.jsonl")


def test_fast_forward_from_snapshots_equals_injecting_from_the_start(tmp_path):
    faults = {"targets": ["hart0.x", "mem.ram[data:+64]"], "sampling": "random", "count": 25}
    run_campaign(campaign(tmp_path, **faults, run={"snapshots": 8}), tmp_path / "ff.jsonl", workers=2,
                 host=host(), progress=False)
    run_campaign(campaign(tmp_path, **faults, run={"snapshots": 0}), tmp_path / "start.jsonl", workers=2,
                 host=host(), progress=False)
    ff, start = results(tmp_path / "ff.jsonl"), results(tmp_path / "start.jsonl")
    assert ff.keys() == start.keys()
    assert any(r["from_step"] > 0 for r in ff.values())          # it did fast-forward
    assert all(r["from_step"] == 0 for r in start.values())
    same = ("outcome", "exit", "steps", "cycles", "differs", "old", "new", "entry", "error")
    assert {k: [r[f] for f in same] for k, r in ff.items()} == {k: [r[f] for f in same] for k, r in start.items()}


def test_stopping_at_convergence_changes_no_result(tmp_path):
    """A run stopped where its machine is the golden run's again is masked: the same run
    carried to its end must say so too, with the same steps, cycles and exit status."""
    faults = {"targets": ["hart0.x", "mem.ram[data:+64]"], "models": ["flip", "zero"], "sampling": "random",
              "count": 30}
    # pruning off in both: it decides many of the same faults at their trigger (test_faults_liveness.py)
    run_campaign(campaign(tmp_path, **faults, run={"snapshots": 16, "prune": False}), tmp_path / "c.jsonl",
                 workers=2, host=host(), progress=False)
    run_campaign(campaign(tmp_path, **faults, run={"snapshots": 16, "converge": False, "prune": False}),
                 tmp_path / "n.jsonl", workers=2, host=host(), progress=False)
    stopped, whole = results(tmp_path / "c.jsonl"), results(tmp_path / "n.jsonl")
    converged = [k for k, r in stopped.items() if r["converged_at"] is not None]
    assert len(converged) >= 10                                   # zeroed and overwritten registers
    assert all(stopped[k]["outcome"] == "masked" and stopped[k]["converged_at"] < whole[k]["steps"]
               for k in converged)
    assert all(r["converged_at"] is None for r in whole.values())
    drop = ("converged_at", "spec_hash")  # the hash covers the campaign, converge included
    assert {k: {f: v for f, v in r.items() if f not in drop} for k, r in stopped.items()} == \
        {k: {f: v for f, v in r.items() if f not in drop} for k, r in whole.items()}


def test_a_partial_campaign_resumes_to_the_uninterrupted_results(tmp_path):
    c = campaign(tmp_path, targets=["hart0.x"], sampling="random", count=30)
    whole = tmp_path / "whole.jsonl"
    run_campaign(c, whole, workers=2, host=host(), progress=False)
    part = tmp_path / "part.jsonl"
    first = run_campaign(c, part, workers=2, host=host(), progress=False, limit=11)
    assert first.ran == 11 and len(results(part)) == 11
    with part.open("a") as fh:  # a kill in the middle of a write leaves a line cut short
        fh.write('{"id": "target=hart0.x[1')
    notes: list[str] = []
    second = run_campaign(c, part, workers=2, host=host(), progress=False, on_note=notes.append)
    assert (second.skipped, second.ran) == (11, 19)
    assert any("cut short" in n for n in notes)
    assert results(part) == results(whole)


def test_a_campaign_killed_with_sigkill_resumes_to_the_same_results(tmp_path):
    """``tessera faults run`` in its own process, killed at a random point once it has begun
    writing results (the point is in the failure message)."""
    import random

    kill_after = random.randint(1, 900)
    toml = tmp_path / "c.toml"
    write_program(tmp_path)
    toml.write_text('seed = 5\n[program]\nprogram = "checksum.s"\narch = "rv32im"\nset = { ram = "1M" }\n'
                    '[faults]\ntargets = ["hart0.x", "mem.ram[data:+64]"]\nsampling = "random"\ncount = 600\n')
    env = {**os.environ, "TESSERA_PLUGINS": "riscv,faults"}
    cmd = [sys.executable, "-m", "tessera.cli.main", "faults", "run", str(toml), "-o", str(tmp_path / "k.jsonl"),
           "--workers", "2", "-q"]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    out = tmp_path / "k.jsonl"
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_text().count("\n") >= kill_after:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    written = out.read_text().count("\n")
    assert 0 < written < 1200, f"the kill after {kill_after} results came too late to interrupt the campaign"
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    whole = subprocess.run([*cmd[:5], str(toml), "-o", str(tmp_path / "w.jsonl"), "--workers", "1", "-q"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0, whole.stderr
    assert results(out) == results(tmp_path / "w.jsonl"), f"killed after {written} results"
    assert len(results(out)) == 1200


def test_a_dask_cluster_gives_the_local_pools_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    c = campaign(tmp_path, targets=["hart0.x"], sampling="random", count=12)
    run_campaign(c, tmp_path / "local.jsonl", workers=1, host=host(), progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run_campaign(c, tmp_path / "dask.jsonl", client=client, host=host(), progress=False)
    assert results(tmp_path / "dask.jsonl") == results(tmp_path / "local.jsonl")


# ------------------------------------------------------------------ bad campaigns


@pytest.mark.parametrize(("change", "message"), [
    ({"faults": {"targets": ["hart0.nope"]}}, r"unknown target 'hart0.nope'"),
    ({"faults": {"faults": ["target=x5,at=pc:no_such_symbol"]}}, r"not an address, and the program has no such symbol"),
    ({"faults": {"targets": ["hart0.x"], "models": ["flip:99"]}}, r"32-bit entries"),
    ({"faults": {"targets": ["hart0.x"], "sampling": "most"}}, r"sampling must be one of"),
    ({"faults": {"targets": ["hart0.x"], "margin": 2}}, r"margin must be a number between 0 and 1"),
    ({"faults": {"classes": ["no_such_class"]}}, r"no instruction of rv32im is of class 'no_such_class'"),
    ({"faults": {}}, r"names no targets"),
    ({"faults": {"targets": ["mem.ram"], "sampling": "random", "count": 10**15}},
     r"random sampling would inject [0-9,]+ faults \(run.max_faults"),
    ({"faults": {"targets": ["hart0.x"]}, "run": {"snapshots": 10**6}}, r"run.snapshots must be at most 1024"),
    ({"faults": {"targets": ["hart0.x"]}, "speed": 3}, r"unknown key 'speed'"),
    ({"outputs": {"stdout": False, "exit": False}, "faults": {"targets": ["hart0.x"]}}, r"compares nothing"),
])
def test_a_faulty_campaign_is_one_line(tmp_path, change, message):
    data = {"program": {"program": str(write_program(tmp_path)), "arch": "rv32im", "set": {"ram": "1M"}}, **change}
    with pytest.raises(ConfigError, match=message) as info:
        prepare(Campaign.from_dict(data, base_dir=str(tmp_path), source="c.toml"), host=host())
    assert "\n" not in str(info.value)


def test_the_command_line_answers_a_faulty_campaign_in_one_line(tmp_path, tessera_cli):
    write_program(tmp_path)
    toml = tmp_path / "bad.toml"
    toml.write_text('[program]\nprogram = "checksum.s"\narch = "rv32im"\n[faults]\ntargets = ["hart0.q"]\n')
    code, _out, err = tessera_cli("faults", "run", toml, "-o", tmp_path / "r.jsonl")
    assert code == 64 and err.count("\n") == 1 and "unknown target 'hart0.q'" in err, err
    code, _out, err = tessera_cli("faults", "run", tmp_path / "nope.toml")
    assert code == 65 and "does not exist" in err
    toml.write_text("[program\n")
    code, _out, err = tessera_cli("faults", "run", toml)
    assert code == 64 and "not valid TOML" in err


def test_a_golden_run_that_fails_stops_the_campaign(tmp_path):
    (tmp_path / "spin.s").write_text("loop: j loop\n")
    data = {"program": {"program": "spin.s", "arch": "rv32im", "max_steps": 1000}, "faults": {"targets": ["hart0.x"]}}
    with pytest.raises(ConfigError, match=r"the golden run \(no fault\) did not end cleanly"):
        prepare(Campaign.from_dict(data, base_dir=str(tmp_path), source="c.toml"), host=host())


def test_a_missing_program_is_a_load_error(tmp_path):
    data = {"program": {"program": "absent.elf", "arch": "rv32im"}, "faults": {"targets": ["hart0.x"]}}
    with pytest.raises(LoadError, match="absent.elf does not exist"):
        prepare(Campaign.from_dict(data, base_dir=str(tmp_path), source="c.toml"), host=host())


def test_a_tensix_kernel_campaign_tells_deadlock_and_golden_check_failures(tmp_path):
    """tt-llk's datacopy kernel on the Wormhole tile board (prebuilt): a flipped TRISC0 register
    leaves the unpacker waiting for a bank the matrix unit keeps (deadlock), and a Dest cell
    flipped after the copy reaches the packer fails the kernel's own golden check (sdc)."""
    from importlib.resources import files

    kernel = files("tessera_tensix") / "tile" / "prebuilt" / "wormhole_b0" / "run.toml"
    deadlock = "target=trisc0.x[31],bit=5,at=step:12241"
    check = "target=dest[40,14],bit=4,at=step:20871"
    data = {"program": {"program": str(kernel)}, "outputs": {"memory": ["0x21800:+0x800"]},
            "faults": {"faults": [deadlock, check]}, "run": {"snapshots": 4}}
    out = tmp_path / "k.jsonl"
    run_campaign(Campaign.from_dict(data, source="k.toml"), out, workers=2, host=host(), progress=False)
    got = results(out)
    assert got[deadlock]["outcome"] == "deadlock" and "every agent is waiting" in got[deadlock]["error"]
    assert got[check]["outcome"] == "sdc" and "check" in got[check]["differs"]
    assert "memory:0x21800:+0x800" in got[check]["differs"]


def checksum_word(machine: Any) -> int:
    """A campaign checker (``test_faults_campaign:checksum_word``): the first data word, read
    through a pointer that fails when the first word is odd — a checker a fault can break."""
    value = int.from_bytes(machine.space.read_bytes(machine.symbols["data"], 4), "little")
    if value % 2 == 0:
        raise ValueError("the first word is even")
    return value


def test_a_checker_that_raises_is_a_one_line_error_on_the_golden_run_and_an_sdc_after_a_fault(tmp_path,
                                                                                              monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # workers get the campaign's sys.path
    odd = "target=mem[data],bit=0,at=step:0"      # 1 -> 0: the checker raises
    c = campaign(tmp_path, faults=[odd], outputs={"checker": "test_faults_campaign:checksum_word"})
    out = tmp_path / "c.jsonl"
    run_campaign(c, out, workers=1, host=host(), progress=False)
    got = results(out)[odd]
    assert got["outcome"] == "sdc" and "checker" in got["differs"]
    (tmp_path / "checksum.s").write_text(CHECKSUM.replace(".word 1,", ".word 2,"))
    data = {"program": {"program": "checksum.s", "arch": "rv32im", "set": {"ram": "1M"}},
            "outputs": {"checker": "test_faults_campaign:checksum_word"}, "faults": {"targets": ["hart0.x"]}}
    with pytest.raises(ConfigError, match=r"outputs.checker .* raised ValueError on the golden run"):
        prepare(Campaign.from_dict(data, base_dir=str(tmp_path), source="c.toml"), host=host())


def test_plan_shows_each_population_as_written(tmp_path, tessera_cli):
    write_program(tmp_path)
    toml = tmp_path / "c.toml"
    toml.write_text('[program]\nprogram = "checksum.s"\narch = "rv32im"\nset = { ram = "1M" }\n'
                    '[faults]\ntargets = ["mem.ram[data:+64]"]\nsampling = "random"\ncount = 3\n')
    code, out, err = tessera_cli("faults", "plan", toml)
    assert code == 0, err
    assert "mem.ram[data:+64]/flip" in out        # brackets are not rich markup
    code, out, err = tessera_cli("faults", "plan", toml, "--json", "--faults")
    meta = json.loads(out)
    assert code == 0 and len(meta["fault_list"]) == 3 and meta["golden"]["exit"] == 136
