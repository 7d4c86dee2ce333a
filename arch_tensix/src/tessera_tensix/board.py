"""A Tensix machine in direct mode: kernel memory, one core, its threads.

L1 (1464 KiB on Wormhole, 1536 KiB on Blackhole) is the RAM region ``l1`` at
:data:`L1_BASE` in direct mode (issue 17's tile maps it at 0, where the baby RISC-V
cores see it); the units address it by offset (:mod:`tessera_tensix.l1`).

Configuration presets: ``--set cfg.NAME=V`` sets a backend-config field, ``--set
tcfg.NAME=V`` a thread-config field of every thread (field names as in the vendor's
register map).  Kernel words live in a 256 KiB RAM at 0 (where ``tessera run --arch tensix kernel.s``
or a word list loads them); thread T0 starts at 0.  Dest can be loaded from a ``.npy``
file (``--dest-in``) when the machine is built and written at the end of the run
(``--dest-out``, by the plugin's run-finished hook).  The Dest debug window is mapped
at 0xFFBD8000 for the RISC-V side (an MMIO device of the core's address-space API).
"""

from __future__ import annotations

from typing import Any

from tessera.errors import ConfigError, TesseraError
from tessera_tensix.config import TensixConfig, presets
from tessera_tensix.core import TensixCore
from tessera_tensix.thread import TensixThread

KERNEL_BASE, KERNEL_SIZE = 0x0, 0x4_0000
#: where direct mode maps L1 (clear of the kernel words at 0)
L1_BASE = 0x1000_0000


def chip_of(arch: Any) -> str:
    """``"wh"`` for the Wormhole architecture record, ``"bh"`` for Blackhole's."""
    return "wh" if arch.name.endswith("-wh") else "bh"


def build(machine: Any) -> None:
    # machine.config was checked against the chip's declaration (its register map checks
    # cfg.* / tcfg.*) when the machine was made; the values are typed
    cfg = TensixConfig.from_machine(machine.config, machine.arch.settings)
    checked = machine.config
    core = TensixCore(cfg, chip_of(machine.arch))
    core.machine = machine
    machine.ext.declare("tensix", core)
    machine.add_sync(core.signal)
    for name, value in presets(checked, "cfg.").items():
        core.cfg.set(name, value)
    machine.space.add_ram("kernel", KERNEL_BASE, KERNEL_SIZE, perms="rwx")
    from tessera_tensix.l1 import L1

    core.l1 = L1(machine.space, L1_BASE, core.chip)
    core.l1.signal = core.signal
    from tessera_tensix import l1io

    l1io.parse_outputs(cfg.l1_out, core.l1.size)  # refuse a bad --l1-out before running, not after
    l1io.load_inputs(core.l1, cfg.l1)
    install_devices(machine, core)
    for _tid in range(cfg.threads):
        add_thread(machine, core)
    seed = core.cfg.get("PRNG_SEED_Seed_Val")
    if seed:
        from tessera_tensix.semantics.convert import seed_prng

        seed_prng(core.sfpu, seed)
    if cfg.dest_in:
        load_dest(core, cfg.dest_in)


def add_thread(machine: Any, core: TensixCore) -> TensixThread:
    """Make the core's next thread (T0, T1, T2 in turn) with the thread-config presets."""
    tid = len(core.threads)
    thread = TensixThread(f"t{tid}", machine.arch, machine.space, tid=tid, core=core)
    for name, value in presets(machine.config, "tcfg.").items():  # the same preset for every thread
        thread.tcfg.set(name, value)
    machine.add_agent(thread)
    core.threads.append(thread)
    return thread


#: the labels that start each thread of a multi-thread kernel (T0 unpack, T1 math, T2 pack)
THREAD_LABELS = ("unpack", "math", "pack")


def start_threads(machine: Any) -> None:
    """Start each thread at its label when the kernel names them (``unpack:``, ``math:``,
    ``pack:``), adding the threads such a kernel needs; a kernel without them runs on T0
    from the load address as before."""
    core = machine.ext.get("tensix")
    if core is None or core.started:
        return  # once per machine: a run continued after a budget or a stop must not restart
    core.started = True
    named = [i for i, label in enumerate(THREAD_LABELS) if label in machine.symbols]
    if not named:
        program_mops(machine, core)
        return
    while len(core.threads) <= max(named):
        add_thread(machine, core).prepare(machine)  # the machine prepared its agents already
    for tid, thread in enumerate(core.threads):
        label = THREAD_LABELS[tid]
        if label in machine.symbols:
            thread.pc = thread.next_pc = machine.symbols[label]
        elif thread.instret == 0:
            thread.halt(0)                        # a thread the kernel gives nothing to run
    program_mops(machine, core)


def program_mops(machine: Any, core: TensixCore) -> None:
    """Direct mode's stand-in for the RISC-V stores to ``TENSIX_MOP_CFG_BASE``: the nine
    words at label ``unpack_mop:`` / ``math_mop:`` / ``pack_mop:`` (or ``mop:`` for a
    one-thread kernel) become that thread's ``MopCfg[0..8]`` before it starts."""
    from tessera_tensix.mop import CFG_WORDS, expander_of

    names = [(f"{label}_mop", tid) for tid, label in enumerate(THREAD_LABELS)] + [("mop", 0)]
    for name, tid in names:
        address = machine.symbols.get(name)
        if address is None:
            continue
        if tid >= len(core.threads):
            raise ConfigError(f"label {name}: the kernel has no thread T{tid} to program")
        try:
            # fetched as kernel words (not a data access a memory watch would report)
            words = [machine.space.fetch(address + 4 * i, 4)[0] for i in range(CFG_WORDS)]
        except TesseraError as exc:  # a label at the end of memory
            raise ConfigError(f"label {name}: cannot read the {CFG_WORDS} MopCfg words at "
                              f"{address:#x}: {exc}") from None
        expander_of(core.threads[tid]).program(words)


def install_devices(machine: Any, core: TensixCore) -> None:
    """Map MMIO windows (the Dest debug window) onto the machine's address space."""
    from tessera_tensix import debug_window

    debug_window.install(machine, core)


def load_dest(core: TensixCore, path: str) -> None:
    import numpy as np

    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read Dest from {path}: {exc}") from None
    if data.shape != core.dest.bits.shape:
        raise ConfigError(f"{path}: Dest is {core.dest.bits.shape}, the file holds {data.shape}")
    core.dest.bits[:] = data.astype(np.uint16)
