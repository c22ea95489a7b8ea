"""The `torch` level: torch-dialect modules, each op run by torch itself.

It stands beside the `onnx` level at the top of the ladder: a module
imported from a `torch.export` program is at this level, and `core` lowers
it through `lower-to-core`. Running it op by op with torch's own kernels is
the reference every lower level of a PyTorch model is compared against.
"""

from rung.runtime.levels import register_level

register_level(
    "torch",
    lowering=None,
    evaluator="rung.runtime.torch_eval:evaluate",
    dialect="torch",
    from_level=None,
    description="the torch dialect, each op run by torch's own kernels",
)
