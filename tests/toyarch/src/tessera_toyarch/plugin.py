"""Entry point of the toy architecture plugin."""

import tessera

from tessera_toyarch.isa import TOY

TESSERA_API_VERSION = 1


@tessera.hookimpl
def tessera_architectures():
    return [TOY]
