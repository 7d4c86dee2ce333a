"""Entry point of the RISC-V plugin (entry-point group ``tessera``, name ``riscv``)."""

import tessera

TESSERA_API_VERSION = 1


@tessera.hookimpl
def tessera_architectures():
    from tessera_riscv.arch import RV32IM, RV64IM

    return [RV32IM, RV64IM]


@tessera.hookimpl
def tessera_cli_commands(cli):
    from tessera_riscv.startfile import command

    cli.add_command(command())


@tessera.hookimpl
def tessera_conformance_cases(arch):
    from tessera_riscv.conformance import cases

    return cases(arch)


@tessera.hookimpl
def tessera_bench_workloads():
    """``tessera bench``'s ``rv32``, ``riscemu`` and ``hooks`` (imported only when the bench asks)."""
    from tessera_riscv.bench import workloads

    return workloads()


@tessera.hookimpl
def tessera_fault_targets(machine):
    """Each RiscvHart's implemented CSRs, for fault injection (tessera-faults)."""
    from tessera_riscv.fault_targets import fault_targets

    return fault_targets(machine)
