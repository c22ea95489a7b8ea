"""The PyTorch importer: a `torch.export` program (or a `.pt2` file) → torch dialect."""

from .importer import import_program, load_program

__all__ = ["import_program", "load_program"]
