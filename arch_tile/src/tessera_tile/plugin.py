"""Entry point of the tile plugin (entry-point group ``tessera``, name ``tile``)."""

from __future__ import annotations

import tessera

TESSERA_API_VERSION = 1
#: The ELF files its architecture runs (docs/writing-plugins.md): RISC-V (EM_RISCV, 243)
#: ones whose build attributes name xtile, so ``tessera run prog.elf`` builds it only for those.
TESSERA_ELF_MACHINES = {"tile": (243, ("xtile",))}


@tessera.hookimpl
def tessera_architectures():
    from tessera_tile.arch import TILE

    return [TILE]


@tessera.hookimpl
def tessera_conformance_cases(arch):
    from tessera_tile.conformance import cases

    return cases(arch)


@tessera.hookimpl
def tessera_memory_watches(machine, space):
    """Checker mode: watch CPU loads and stores of RAM for races with pending tile operations."""
    system = machine.ext.get("tile")
    if system is None or space is not machine.space or system.cfg.mode != "checker":
        return []
    from tessera_tile.watch import cpu_watches

    return cpu_watches(system)


@tessera.hookimpl
def tessera_execute_instrument(machine, arch, ins):
    """Checker mode: note the PC of CPU loads and stores, so a race report can name it."""
    system = machine.ext.get("tile")
    if system is None or system.cfg.mode != "checker":
        return None
    from tessera_tile.watch import pc_marker

    return pc_marker(ins)


@tessera.hookimpl
def tessera_run_finished(machine, result):
    """Log what checker mode and strict sequencing found (also kept in machine.ext["tile"])."""
    system = machine.ext.get("tile")
    if system is None:
        return
    from tessera_tile.watch import log_findings

    log_findings(system)


@tessera.hookimpl
def tessera_bench_workloads():
    """``tessera bench``'s ``tile-harts`` workload (imported only when the bench asks)."""
    from tessera_tile.bench import workloads

    return workloads()


@tessera.hookimpl
def tessera_fault_targets(machine):
    """Tile register files and tile CSRs, for fault injection (tessera-faults); the harts'
    own CSRs come from the RISC-V plugin."""
    from tessera_tile.fault_targets import fault_targets

    return fault_targets(machine)
