"""kernel → C: code generation from the kernel dialect (see `emit`)."""

from .emit import RUNTIME_HEADER, CodegenError, CProgram, Signature, generate_c

__all__ = ["RUNTIME_HEADER", "CProgram", "CodegenError", "Signature", "generate_c"]
