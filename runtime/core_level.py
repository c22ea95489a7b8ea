"""The `core` execution level: lower to the core dialect, run the numpy interpreter."""

from rung.runtime.levels import pipeline_lowering, register_level

register_level(
    "core",
    from_level="onnx",
    lowering=pipeline_lowering("lower-to-core"),
    from_dialects={"torch": pipeline_lowering("lower-to-core")},
    evaluator="rung.dialects.core_eval:evaluate",
    description="onnx (or torch) → core lowering, run by the core dialect's numpy interpreter",
    dialect="core",
)
