"""Entry point of the rfPhoenix plugin (entry-point group ``tessera``, name ``phoenix``)."""

import tessera

TESSERA_API_VERSION = 1


@tessera.hookimpl
def tessera_architectures():
    from tessera_phoenix.arch import PHOENIX

    return [PHOENIX]
