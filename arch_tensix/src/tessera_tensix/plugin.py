"""Entry point of the Tensix plugin (entry-point group ``tessera``, name ``tensix``)."""

from __future__ import annotations

import tessera

TESSERA_API_VERSION = 1
#: The ELF files its architectures run (docs/writing-plugins.md): the direct-mode
#: architectures none; the tiles RISC-V ELFs that name the ``xttinsn`` extension (the
#: vendor's ELFs name none: a kernel manifest or ``--arch`` chooses the tile for them),
#: so choosing an architecture for a plain RISC-V ELF never builds the Tensix tables.
TESSERA_ELF_MACHINES = {"tensix-tile": (243, ("xttinsn",)), "tensix-tile-wh": (243, ("xttinsn",))}


@tessera.hookimpl
def tessera_architectures():
    from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
    from tessera_tensix.tile.arch import TILE_BH, TILE_WH

    return [TENSIX_BH, TENSIX_WH, TILE_BH, TILE_WH]


@tessera.hookimpl
def tessera_program_formats():
    """Tensix kernel manifests (``tessera run kernel.toml``: one ELF per baby RISC-V core)."""
    from tessera.loaders import ProgramFormat
    from tessera_tensix.tile import kernel

    return [ProgramFormat("tensix-kernel", "a Tensix kernel: one ELF per baby RISC-V core, L1 inputs and "
                                           "expected outputs (docs/tensix-llk.md)",
                          kernel.claims, kernel.architecture, kernel.load)]


@tessera.hookimpl
def tessera_machine_ready(machine):
    """Start the threads of a multi-thread kernel at their labels (``unpack:`` ``math:`` ``pack:``);
    direct mode only (a tile's threads are fed by its cores)."""
    if machine.ext.get("tensix") is not None and machine.ext.get("tensix_tile") is None and not machine.restored:
        from tessera_tensix.board import start_threads

        start_threads(machine)


@tessera.hookimpl
def tessera_run_finished(machine, result):
    """Write Dest to ``--dest-out`` and L1 to ``--l1-out`` when a Tensix run ends (whatever the reason)."""
    core = machine.ext.get("tensix")
    if core is not None and machine.ext.get("tensix_kernel") is not None:
        from tessera_tensix.tile import kernel

        kernel.finish(machine, result)
    if core is not None and machine.config.get("l1_out"):
        from tessera_tensix import l1io

        l1io.save_outputs(core.l1, machine.config.get("l1_out"))
    path = machine.config.get("dest_out") if core is not None else None
    if path:
        import numpy as np

        from tessera.errors import ConfigError

        try:
            np.save(str(path), core.dest.bits, allow_pickle=False)
        except OSError as exc:
            raise ConfigError(f"cannot write Dest to {path}: {exc.strerror or exc}") from None


@tessera.hookimpl
def tessera_fault_targets(machine):
    """LRegs per lane, Dest, SrcA and SrcB cells, for fault injection (tessera-faults)."""
    from tessera_tensix.fault_targets import fault_targets

    return fault_targets(machine)


@tessera.hookimpl
def tessera_conformance_cases(arch):
    """Direct-mode kernels with expected results, for the conformance suite (docs/conformance.md)."""
    from tessera_tensix.conformance import cases

    return cases(arch)


@tessera.hookimpl
def tessera_bench_workloads():
    """``tessera bench``'s ``sfpu``, ``matmul`` and ``llk-matmul`` workloads (imported only when the
    bench asks)."""
    from tessera_tensix.bench import workloads

    return workloads()


@tessera.hookimpl
def tessera_cli_commands(cli):
    """``tessera tensix build``/``fetch``/``kernels``: compile tt-llk's test kernels (docs/tensix-llk.md)."""
    from tessera_tensix.llk.cli import tensix

    cli.add_command(tensix)
