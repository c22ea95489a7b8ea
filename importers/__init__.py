"""Importers: each reads one source format and builds framework-dialect IR, nothing else."""
