"""Entry point of the rfPhoenix plugin (entry-point group ``tessera``, name ``phoenix``)."""

import tessera

TESSERA_API_VERSION = 1

#: What the conformance suite should expect (docs/conformance.md): everything passes.
TESSERA_CONFORMANCE: dict = {"xfail": {}}
#: The ELF files its architectures run (docs/writing-plugins.md): none, so choosing an
#: architecture for an ELF (``tessera run prog.elf``) never needs to build rfPhoenix.
TESSERA_ELF_MACHINES: dict = {}


@tessera.hookimpl
def tessera_architectures():
    from tessera_phoenix.arch import PHOENIX

    return [PHOENIX]


@tessera.hookimpl
def tessera_conformance_cases(arch):
    from tessera_phoenix.conformance import cases

    return cases(arch)


@tessera.hookimpl
def tessera_fault_targets(machine):
    """Vector registers lane by lane and the TLB entries, for fault injection (tessera-faults)."""
    from tessera_phoenix.fault_targets import fault_targets

    return fault_targets(machine) if machine.arch.name == "phoenix" else None


@tessera.hookimpl
def tessera_bench_workloads():
    """``tessera bench``'s ``phoenix`` loop (imported only when the bench asks)."""
    from tessera_phoenix.bench import workloads

    return workloads()
