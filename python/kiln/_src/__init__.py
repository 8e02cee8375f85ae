"""kiln's machinery under the public packages: one module per concept, each importing only
modules below it (tests/architecture/python_layers.py holds the order)."""
