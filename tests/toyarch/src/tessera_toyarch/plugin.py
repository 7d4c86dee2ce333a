"""Entry point of the toy architecture plugin."""

import tessera

TESSERA_API_VERSION = 1

#: What the conformance suite should expect (docs/conformance.md): everything passes.
TESSERA_CONFORMANCE: dict = {"xfail": {}}


@tessera.hookimpl
def tessera_architectures():
    from tessera_toyarch.isa import TOY  # imported when the architecture is needed, not at start-up

    return [TOY]


@tessera.hookimpl
def tessera_conformance_cases(arch):
    from tessera_toyarch.conformance import cases

    return cases(arch)
