"""The `kernel` execution level: lower to the kernel dialect, generate C, compile and run it."""

from rung.runtime.levels import pipeline_lowering, register_level

register_level(
    "kernel",
    from_level="core",
    lowering=pipeline_lowering("core-to-kernel"),
    evaluator="rung.runtime.native:evaluate",
    description="onnx → core → kernel, compiled to C by the system C compiler and run natively",
    dialect="kernel",
)
