"""Bit-exact numerics of the tile coprocessor: formats, rounding, MMA, TALU and conversions.

Pure functions on bytes (one tile in, one tile out) so that the engines, the race checker and
the tests can share them without any machine state.  Module map:

* :mod:`.formats`   element formats (``TFMT`` = the ``tfmt`` CSR codes), encode/decode, fflags bits
* :mod:`.rounding`  ``trm`` decoding, correct rounding of exact values to any format and mode
* :mod:`.exactsum`  exact sums of float64 terms (round-to-odd result) for single-rounding ops
* :mod:`.mma`       ``MMA_TYPES`` (the mmauop table) and ``mma()``
* :mod:`.talu`      ``UNARY``/``BINARY``/``TERNARY`` tables and ``unary()/binary()/ternary()``
* :mod:`.convert`   ``convert()`` for TALU conversions and Tile Move FP scalars
* :mod:`.sfu`, :mod:`.talu_float`, :mod:`.talu_int`  element semantics behind ``talu``

Import the functions from their modules (``from tessera_tile.numerics.mma import mma``): the
package does not re-export ``mma`` or ``convert``, whose names would shadow the submodules.
"""

from . import convert, formats, mma, talu
from .formats import DZ, NV, NX, OF, TFMT, UF, Format
from .mma import MMA_TYPES, MmaType
from .talu import BINARY, TERNARY, UNARY, Result

__all__ = ["BINARY", "DZ", "MMA_TYPES", "NV", "NX", "OF", "TERNARY", "TFMT", "UF", "UNARY", "Format",
           "MmaType", "Result", "convert", "formats", "mma", "talu"]
