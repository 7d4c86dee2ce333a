"""The ``tessera`` command line (click)."""
