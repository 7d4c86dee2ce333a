"""A Tensix machine in direct mode: kernel memory, one core, its threads.

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

from tessera.errors import ConfigError
from tessera_tensix.config import TensixConfig, presets
from tessera_tensix.core import TensixCore
from tessera_tensix.thread import TensixThread

KERNEL_BASE, KERNEL_SIZE = 0x0, 0x4_0000


def build(machine: Any) -> None:
    # machine.config was checked against the chip's declaration (its register map checks
    # cfg.* / tcfg.*) when the machine was made; the values are typed
    cfg = TensixConfig.from_machine(machine.config, machine.arch.settings)
    checked = machine.config
    core = TensixCore(cfg)
    core.machine = machine
    machine.ext.declare("tensix", core)
    for name, value in presets(checked, "cfg.").items():
        core.cfg.set(name, value)
    machine.space.add_ram("kernel", KERNEL_BASE, KERNEL_SIZE, perms="rwx")
    install_devices(machine, core)
    for tid in range(cfg.threads):
        thread = TensixThread(f"t{tid}", machine.arch, machine.space, tid=tid, core=core)
        for name, value in presets(checked, "tcfg.").items():  # the same preset for every thread
            thread.tcfg.set(name, value)
        machine.add_agent(thread)
    seed = core.cfg.get("PRNG_SEED_Seed_Val")
    if seed:
        from tessera_tensix.semantics.convert import seed_prng

        seed_prng(core.sfpu, seed)
    if cfg.dest_in:
        load_dest(core, cfg.dest_in)


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
