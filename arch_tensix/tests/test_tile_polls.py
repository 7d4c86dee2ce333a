"""Baby RISC-V cores that only poll memory park until it changes (tessera_tensix.tile.polls)."""

from __future__ import annotations

import pytest
from tensix_tile_support import boot_bh, manifest, run_kernel

from tessera.errors import BudgetExceeded, Deadlock
from tessera.machine import Machine

FLAG = 0x1000
#: RISCV B polls the flag word in L1 until it is non-zero, then exits with it
POLL = f"""
    li t2, {FLAG:#x}
1:  lw a0, 0(t2)
    beqz a0, 1b
    li a7, 93
    ecall
"""
#: T0 counts to 20000 (so RISCV B polls long enough to park), then sets the flag and exits
SETTER = f"""
    li t1, 20000
1:  addi t1, t1, -1
    bnez t1, 1b
    li t2, {FLAG:#x}
    li t1, 7
    sw t1, 0(t2)
    li a7, 93
    li a0, 0
    ecall
"""


def test_a_core_polling_a_word_nobody_writes_is_a_deadlock_naming_the_word(tmp_path):
    with pytest.raises(Deadlock) as err:
        run_kernel(manifest(tmp_path, "bh", {"brisc": POLL}), max_steps=1_000_000)
    text = str(err.value)
    assert f"brisc waits for memory at {FLAG:#x} (= 0x0) to change: it polls them at pc" in text
    brisc = err.value.waits["brisc"]
    assert "wall clock" not in brisc


def test_a_parked_poller_wakes_when_another_core_stores_to_its_word(tmp_path):
    path = manifest(tmp_path, "bh", {"brisc": boot_bh(0) + POLL, "trisc0": SETTER})
    m, result = run_kernel(path, max_steps=1_000_000)
    assert result.reason == "halted"
    brisc = m.agent("brisc")
    assert brisc.exit_code == 7                      # it saw the value T0 stored
    # parked, it did not run the whole time T0 counted (about 40000 instructions)
    assert brisc.instret < 20_000


def test_j_dot_parks_for_good(tmp_path):
    with pytest.raises(Deadlock) as err:
        run_kernel(manifest(tmp_path, "bh", {"brisc": "1: j 1b\n"}), max_steps=1_000_000)
    assert err.value.waits["brisc"] == "nothing: it loops forever at 0x0 (j .)"


def test_a_delay_on_the_wall_clock_alone_is_never_parked(tmp_path):
    delay = """
    li t0, 0xFFB12000
    lw t1, 0x1F0(t0)
    li t2, 30000
    add t2, t2, t1
1:  lw t1, 0x1F0(t0)
    bltu t1, t2, 1b
    li a7, 93
    li a0, 5
    ecall
"""
    m, result = run_kernel(manifest(tmp_path, "bh", {"brisc": delay}), max_steps=1_000_000)
    assert result.reason == "halted" and m.agent("brisc").exit_code == 5


def test_a_pure_counting_loop_is_not_parked(tmp_path):
    with pytest.raises(BudgetExceeded):
        run_kernel(manifest(tmp_path, "bh", {"brisc": "1: addi t0, t0, 1\nj 1b\n"}), max_steps=50_000)


def test_park_polls_off_runs_the_poll_until_the_budget(tmp_path):
    from tensix_tile_support import arch_of, host

    from tessera.loaders import load_program

    path = manifest(tmp_path, "bh", {"brisc": POLL})
    m = Machine(arch_of("bh"), host=host(), config={"park_polls": False})
    load_program(m, str(path))
    with pytest.raises(BudgetExceeded):
        m.run(max_steps=200_000)


def test_a_snapshot_of_a_parked_poller_resumes_and_wakes(tmp_path):
    path = manifest(tmp_path, "bh", {"brisc": boot_bh(0) + POLL, "trisc0": SETTER})
    m, _ = run_kernel(path, max_steps=10_000, raise_on_budget=False)
    assert m.agent("brisc").status == "waiting"       # parked on the flag by now
    restored = Machine.restore(m.snapshot(), host=m.host)
    result = restored.run(max_steps=1_000_000)
    assert result.reason == "halted" and restored.agent("brisc").exit_code == 7


def test_a_trisc_polling_a_tensix_semaphore_parks_on_it(tmp_path):
    # T0 waits for Tensix semaphore 0 to be posted; nobody posts it: a deadlock naming the word
    poll = """
    li t2, 0xFFE80020
1:  lw a0, 0(t2)
    beqz a0, 1b
    li a7, 93
    ecall
"""
    with pytest.raises(Deadlock) as err:
        run_kernel(manifest(tmp_path, "bh", {"brisc": boot_bh(0) + "1: j 1b\n", "trisc0": poll}),
                   max_steps=1_000_000)
    assert "trisc0 waits for memory at 0xffe80020 (= 0x0) to change: it polls them" in str(err.value)


def test_a_mailbox_pop_is_not_a_poll(tmp_path):
    # a load of a mailbox pops (it waits while empty): the core parks on the mailbox itself
    pop = """
    li t2, 0xFFEC0000
    lw a0, 0(t2)
    li a7, 93
    ecall
"""
    with pytest.raises(Deadlock) as err:
        run_kernel(manifest(tmp_path, "bh", {"brisc": pop}), max_steps=1_000_000)
    assert "mailbox" in err.value.waits["brisc"] and "to receive a value (empty)" in err.value.waits["brisc"]
