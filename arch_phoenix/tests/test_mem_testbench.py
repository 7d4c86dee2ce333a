"""``--set memory=testbench``: the HDL test bench's 256 KiB memory aliased over the address space.

The author's ``load_store.bin`` stores through ``st.t r1, 0xFFF80000[r1]`` (its
assembler dropped displacement bit 18 of ``0xFFFC0000[r1]``): outside the spec's
memory map (a double fault) but the same bench location as ``0xFFFC0000 + r1``.
Our assembler encodes that instruction to the very bytes of the author's listing, so
:data:`LOAD_STORE` reproduces the run without shipping the author's file (it has no
licence); :func:`test_the_authors_load_store_bin` runs the real one when
``RFPHOENIX_EXAMPLES`` names the author's ``software/examples`` folder.

Every test runs on the engine ``TESSERA_ENGINE`` selects (the suite runs on both);
``TESSERA_BLOCK_HOT=2`` (conftest) makes the loops run as translated blocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tessera.errors import ConfigError, UnhandledTrap
from tessera.isa.asm import assemble
from tessera.loaders import load_program
from tessera.machine import Machine
from tessera_phoenix.arch import PHOENIX
from tessera_phoenix.testbench import HOME, SIZE, fold

RESET = 0xFFFD_0000
BENCH = {"memory": "testbench"}

# load_store.bin's indexed store loop, and its end (spec 8.2): bytes 0..15 of the
# scratchpad get 0..15 (overlapping tetra stores), then the self-loop halts thread 0
LOAD_STORE = """
        ldi     r1, 0
        ldi     r2, 16
loop1:  st.t    r1, 0xFFF80000[r1]      ; the author's listing: 68 20 00 00 00 01 + pfx 0x1fff
        addi    r1, r1, 1
        addi    r2, r2, -1
        bne     r2, r0, loop1
        ld.t    r3, 0xFFFC0000[r0]
        ld.t    r4, 0xFFFC000C[r0]
done:   bra     done
"""


def bench_machine(source: str, *, entry: int | None = None, **config) -> Machine:
    machine = Machine(PHOENIX, host=None, config=config)
    program = assemble(PHOENIX, source, base=RESET)
    for address, blob in program.segments:
        machine.space.write_bytes(address, blob, force=True)
    machine.set_entry(RESET if entry is None else entry)
    return machine


def gpr(machine: Machine, n: int) -> int:
    return machine.agent("t0").gpr[n]


def test_load_store_indexed_store_reaches_the_scratchpad_through_the_alias():
    assert assemble(PHOENIX, "st.t r1, 0xFFF80000[r1]", base=RESET).segments[0][1] == bytes.fromhex(
        "682000000001d7ff00000000")  # byte for byte the author's word and postfix
    machine = bench_machine(LOAD_STORE, **BENCH)
    result = machine.run(max_steps=10_000)
    assert (result.reason, result.exit_code) == ("halted", 0)
    assert machine.space.read_bytes(HOME, 20) == bytes(range(16)) + bytes(4)
    assert (gpr(machine, 3), gpr(machine, 4)) == (0x0302_0100, 0x0F0E_0D0C)
    assert machine.agent("t0").pc == assemble(PHOENIX, LOAD_STORE, base=RESET).symbols["done"]


def test_load_store_double_faults_on_the_specification_memory_map():
    machine = bench_machine(LOAD_STORE)
    with pytest.raises(UnhandledTrap, match="double fault"):
        machine.run(max_steps=10_000)
    assert machine.space.read_bytes(0xFFFC0000, 4) == bytes(4)


def test_the_memory_repeats_every_256_kib_and_wraps_at_its_end():
    machine = Machine(PHOENIX, host=None, config=BENCH)
    space = machine.space
    space.write(0x0000_0100, 4, 0x1122_3344)       # through the alias region
    assert space.read(HOME + 0x100, 4) == 0x1122_3344
    assert space.read(0x1234_0100, 4) == 0x1122_3344
    space.write(HOME + 0x200, 2, 0xBEEF)           # the home copy
    assert space.read(0x0004_0200, 2) == 0xBEEF
    space.write(0x3FFFE, 4, 0xAABB_CCDD)           # runs past the end: wraps to offset 0
    assert space.read_bytes(HOME + SIZE - 2, 2) == b"\xdd\xcc"
    assert space.read_bytes(HOME, 2) == b"\xbb\xaa"
    assert space.read(0x7FFFE, 4) == 0xAABB_CCDD
    kinds = {r["name"]: (r["kind"], r["start"], r["size"]) for r in space.describe()}
    assert kinds == {"testbench": ("ram", HOME, SIZE), "testbench.alias": ("alias", 0, HOME)}
    assert machine.budget.used == SIZE  # one 256 KiB memory, whatever the aliases


def test_thread_accesses_fold_every_address_including_48_bit_physical_ones():
    source = """
        ldi     r1, 0x5A5A
        st.w    r1, 0x00000010[r0]
        ld.w    r2, 0xFFFC0010[r0]
        ld.w    r3, 0x7FF80010[r0]
done:   bra     done
"""
    machine = bench_machine(source, **BENCH)
    assert machine.run(max_steps=100).reason == "halted"
    assert (gpr(machine, 2), gpr(machine, 3)) == (0x5A5A, 0x5A5A)
    assert machine.agent("t0").space.translate(0x0001_0000, "x") == RESET
    assert fold(0xABC_0004_0010) == HOME + 0x10


def _patch_program(store_base: int) -> tuple[str, int, int]:
    """A loop whose body adds 1 to r5 until it rewrites that add, through ``store_base``, to add 3.

    Returns the source, the address of the patched instruction and the expected r5.
    """
    old = assemble(PHOENIX, "addi r5, r5, 1", base=RESET).segments[0][1]
    new = assemble(PHOENIX, "addi r5, r5, 3", base=RESET).segments[0][1]
    patch = RESET + 2 * 6  # after the two ldi below
    stores = []
    for k, (a, b) in enumerate(zip(old, new)):
        if a != b:
            stores.append(f"        ldi     r7, {b}\n"
                          f"        st.b    r7, {store_base + (patch & (SIZE - 1)) + k:#x}[r0]\n")
    source = f"""
        ldi     r5, 0
        ldi     r2, 8
patch:  addi    r5, r5, 1
        addi    r2, r2, -1
        ldi     r6, 4
        bne     r2, r6, skip
{''.join(stores)}skip:   bne     r2, r0, patch
done:   bra     done
"""
    return source, patch, 4 * 1 + 4 * 3


@pytest.mark.parametrize(("entry_base", "store_base"), [
    (HOME, 0x1234_0000),   # run at the home addresses, patch through an alias
    (0x1234_0000, HOME),   # run through an alias, patch at the home addresses
    (0x0008_0000, 0x00C4_0000),  # run and patch through two different aliases
], ids=["store-via-alias", "fetch-via-alias", "two-aliases"])
def test_a_store_through_one_alias_invalidates_code_fetched_through_another(entry_base, store_base):
    source, patch, expected = _patch_program(store_base)
    entry = entry_base + (RESET & (SIZE - 1))
    machine = bench_machine(source, entry=entry, **BENCH)
    result = machine.run(max_steps=1000)
    assert result.reason == "halted"
    assert gpr(machine, 5) == expected  # 8 if the old decoded add had survived the store
    new = assemble(PHOENIX, "addi r5, r5, 3", base=RESET).segments[0][1]
    assert machine.space.read_bytes(patch, 6) == new


def test_snapshot_round_trip_keeps_the_aliasing(tmp_path):
    machine = bench_machine(LOAD_STORE, **BENCH)
    assert machine.run(max_steps=20, raise_on_budget=False).reason == "budget"  # mid-loop
    path = tmp_path / "bench.snap"
    machine.save_snapshot(str(path))
    again = Machine.load_snapshot(str(path))
    again.space.write(0x0000_0300, 4, 0xCAFE_F00D)
    assert again.space.read(HOME + 0x300, 4) == 0xCAFE_F00D
    assert again.run(max_steps=10_000).reason == "halted"
    assert again.space.read_bytes(HOME, 16) == bytes(range(16))


@pytest.mark.parametrize(("config", "message"), [
    ({"dram": 1 << 20}, "no DRAM"),
    ({"pma": True}, "no PMA"),
    ({"memory": "flat"}, "one of spec, testbench"),
])
def test_settings_the_bench_memory_cannot_honour_are_refused(config, message):
    with pytest.raises(ConfigError, match=message):
        Machine(PHOENIX, host=None, config={**BENCH, **config} if "memory" not in config else config)


def test_pma_false_is_accepted_and_the_default_map_is_unchanged():
    Machine(PHOENIX, host=None, config={**BENCH, "pma": False})
    names = [r["name"] for r in Machine(PHOENIX, host=None).space.describe()]
    assert names == ["dram", "io", "pma", "scratch", "rom"]


def test_cli_runs_the_image_with_memory_testbench_and_double_faults_without(tmp_path):
    program = assemble(PHOENIX, LOAD_STORE, base=RESET)
    start, blob = program.image()
    image = tmp_path / "ls.bin"
    image.write_bytes(bytes(start - 0xFFFC0000) + blob)  # linked like the author's: 0xFFFC0000 first
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_") or k == "TESSERA_ENGINE"}
    env["TESSERA_PLUGINS"] = "phoenix"
    run = [*cmd, "run", "--arch", "phoenix", str(image), "--load", "0xFFFC0000"]
    bench = subprocess.run([*run, "--set", "memory=testbench"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert bench.returncode == 0, bench.stderr
    spec = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120)
    assert spec.returncode == 68 and "double fault" in spec.stderr


def test_the_authors_load_store_bin():
    folder = os.environ.get("RFPHOENIX_EXAMPLES")
    if not folder:
        pytest.skip("RFPHOENIX_EXAMPLES is not set (the author's software/examples folder of "
                    "github robfinch/rfPhoenix; its files carry no licence, so they are not shipped)")
    path = Path(folder) / "load_store.bin"
    machine = Machine(PHOENIX, host=None, config=BENCH)
    load_program(machine, str(path), load=0xFFFC0000)
    result = machine.run(max_steps=10_000)
    assert (result.reason, result.exit_code) == ("halted", 0)
    assert machine.agent("t0").pc == 0xFFFD00B4  # `mismatch: bra mismatch`, its last instruction
    assert machine.space.read_bytes(HOME, 16) == bytes(range(16))
    spec = Machine(PHOENIX, host=None)
    load_program(spec, str(path), load=0xFFFC0000)
    with pytest.raises(UnhandledTrap, match="double fault"):
        spec.run(max_steps=10_000)
