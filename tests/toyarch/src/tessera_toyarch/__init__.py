"""Toy architecture for testing the Tessera core (see ``isa.py``)."""

from tessera_toyarch.isa import TOY

__all__ = ["TOY"]
