"""Passes: one package per level crossing, plus the named pipelines in `pipelines.py`."""
