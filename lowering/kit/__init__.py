"""The lowering kit: what every frontend's lowering to core is written with.

A frontend (`onnx_to_core`, later `torch_to_core`) keeps a `HandlerTable` of
small handlers, one per source op class. Its pass calls each handler with a
`CoreBuilder` positioned at the op; the handler returns the replacement
values by output position (None for an absent output), or raises
`LoweringError` for a form it does not handle, which the pass then reports.
A one-to-one lowering is a few lines:

    from rung.dialects.onnx import generated_ops as onnx
    from rung.lowering.kit import CoreBuilder
    from rung.lowering.onnx_to_core.registry import Results, lowers

    @lowers(onnx.SoftsignOp)
    def softsign(b: CoreBuilder, op: onnx.SoftsignOp) -> Results:
        x = op.input
        return [b.binary("div", x, b.binary("add", b.splat(1, x), b.unary("abs", x)))]

What the kit offers:

* `CoreBuilder` (`core_builder`): constants (`constant`, `scalar`, `splat`),
  elementwise ops (`unary`, `binary`, `compare`, `select`, `cast`), shapes
  (`shape_of`, `dims`, `shape_vector`, `reshape`, `reshape_to`, `transpose`,
  `reduce`, `reduce_keep`, `count`: a mean's divisor, read at run time over dynamic dims),
  numpy broadcasting (`broadcast_to`, `broadcast_all`, `broadcast_in_dim`,
  `broadcast_merge`), data movement (`slice`, `gather`, `concat`, `retype`),
  `matmul` (1-D and batched, numpy rules; `?` batch dims broadcast at run
  time), `softmax` / `log_softmax` (shared by every frontend), `quantize` /
  `dequantize`, and
  `check` (a run-time check of a value, e.g. TopK's K against its axis).
* Shapes and types (`shapes`): `shape_of_type`, `ranked_shape`, `is_static`,
  `tensor`, `element_of`, `normalize_axis`, `int_attr`, `acc_type`, and
  `DimOf(value, axis)`, a dim known at run time, for shapes built with
  `reshape_to` / `shape_vector`.
* Constant operands (`folding`): `constant_array`, `constant_ints`, which fold
  small core computations on constants (up to `FOLD_LIMIT` elements).
* Sizes only the run knows (`run_time_sizes`): `declared` (a value in the
  model's declared type, its claimed static dims checked at run time),
  `one_value` (a one-element operand as a scalar, its count checked), `iota`,
  `size_like`, and `stacked` / `unstacked` (a `[P, ...]` view over run-time
  batch dims).
* Declarative rules (`rules`): `Elementwise(source, kind, fn, operands,
  requires)`, a source op that is one core unary, binary or compare op of its
  named operands (broadcast, type-promoted), installed into a table with
  `install(table, rules, reader)`. Both frontends keep their one-to-one
  mappings as such tables.
* The handler table (`table`): `HandlerTable` with `lowers`, `add`, `remove`
  and `lookup`, keyed by op class or by a custom op's `(domain, op_type)`.

Element types come from `rung.dialects.dtypes` (`f32`, `i64`, `numpy_dtype`,
`element_type`), constant data from `rung.dialects.constants`.
"""

from .core_builder import CoreBuilder
from .errors import LoweringError
from .folding import FOLD_LIMIT, constant_array, constant_ints
from .rules import Elementwise, install, promoted
from .run_time_sizes import AnySize, declared, iota, one_value, size_like, stacked, unstacked
from .shapes import (
    DimOf,
    Size,
    acc_type,
    element_of,
    int_attr,
    is_static,
    normalize_axis,
    ranked_shape,
    shape_of_type,
    static_size,
    tensor,
)
from .table import HandlerTable, Key, key_name

__all__ = [
    "FOLD_LIMIT",
    "AnySize",
    "CoreBuilder",
    "DimOf",
    "Elementwise",
    "HandlerTable",
    "Key",
    "LoweringError",
    "Size",
    "acc_type",
    "constant_array",
    "constant_ints",
    "declared",
    "element_of",
    "install",
    "int_attr",
    "iota",
    "is_static",
    "key_name",
    "normalize_axis",
    "one_value",
    "promoted",
    "ranked_shape",
    "shape_of_type",
    "size_like",
    "stacked",
    "static_size",
    "tensor",
    "unstacked",
]
