"""kernel → C: one readable C11 file per model, a header, and a side file of weights.

The C follows the IR closely, so that a reader can map one onto the other:
every buffer is a pointer variable (plus one `int64_t` per run-time dim),
every `kernel.loop` a `for` nest, every scalar op one assignment. Index
constants are written inline. Buffers are contiguous and row-major, so a
load is `x[(i0 * 4 + i1)]`.

Scalars of half types (f16, bf16) are computed as `float` and rounded back
after each op, which is what the IR's f16 arithmetic means; their buffers
hold `_Float16` and `uint16_t` bits respectively. The 8-, 6- and 4-bit floats
work the same way, one byte per element, encoded and decoded by the runtime
header; 2- and 4-bit integers are held one per byte (the low bits, as
ml_dtypes lays them out), sign-extended on load and wrapped to their width
after each op.

Each op is written by one emitter, registered by op class in
`emitter.EMITTERS` and grouped by family: `scalar` (arith, math), `memory`
(alloc, weights, views, copy, load, store, dim), `control` (kernel.loop,
scf.if, scf.while, and cf.assert, a run-time check) and `calls` (matmul and
runtime calls), and `values` (lists, optionals, strings, and their side of the
ABI). `c_types` spells types and literals; `emit.generate_c` wraps
the body in the C ABI.

A plugin that adds an op below kernel level gives it C the same way:

    from rung.lowering.kernel_to_c import Emitter, add_emitter

    def hello(e: Emitter, op: HelloOp) -> None:
        e.emit(f'puts("{op.greeting.data}");')

    add_emitter(HelloOp, hello)

(or `@emits(HelloOp)` on the function; `scalar.expression` registers ops
whose result is one C expression of their operands).
"""

from . import calls, control, memory, scalar, values  # noqa: F401  (register emitters)
from .emit import RUNTIME_HEADER, CodegenError, CProgram, Signature, generate_c
from .emitter import EMITTERS, Emitter, add_emitter, emits

__all__ = [
    "EMITTERS",
    "RUNTIME_HEADER",
    "CProgram",
    "CodegenError",
    "Emitter",
    "Signature",
    "add_emitter",
    "emits",
    "generate_c",
]
