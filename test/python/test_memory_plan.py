"""The memory plan (`kernel-plan-memory`): correct results, no overlap of live buffers, low peak.

- Numerics: seeded random ONNX chains (elementwise, transpose, concat, reshape;
  static and run-time batch sizes) run natively with the plan and match the
  core interpreter, and match bit for bit the same program with every buffer
  in its own bytes (`no-reuse`).
- Property: on random kernel programs (views, copies, calls, scf.if, loops
  with allocs inside), an independent liveness computation finds no two
  buffers with overlapping lifetimes sharing a byte, and every heap buffer
  freed after its last use unless it is returned.
- Peak: a long chain of same-size ops needs an arena of about two buffers.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue

from rung.dialects import context, kernel, parse_module
from rung.lowering.kernel_opt.memory_plan import ALIGN, PlanMemoryPass, place, plan_summary
from rung.lowering.kernel_opt.memory_plan import Slot as PlanSlot
from rung.lowering.pipelines import default_registry
from rung.runtime import InferenceSession
from rung.runtime.native import evaluate

UNFUSED = "lower-to-core,convert-core-to-kernel,cse,dce"
"""Bufferized but not fused: every tensor has a buffer, the most the plan can share."""

# ---- ONNX chains ------------------------------------------------------------------------------

Shape = tuple[int | str, ...]


def random_chain(seed: int, dynamic: bool, length: int = 10) -> onnx.ModelProto:
    """A chain of `length` ops; operands are the previous value or an earlier one of the
    same shape, so some values stay live across several ops. Outputs: the last value and
    one from the middle (a returned buffer must survive everything after it)."""
    rng = np.random.default_rng(seed)
    x_shape: Shape = ("n" if dynamic else int(rng.integers(2, 4)),) + tuple(
        int(d) for d in rng.integers(2, 5, size=2)
    )
    values: list[tuple[str, Shape]] = [("x", x_shape)]
    nodes = []
    inits = []
    for i in range(length):
        src, shape = values[-1] if rng.random() < 0.7 else values[int(rng.integers(len(values)))]
        same = [name for name, s in values if s == shape]
        name = f"v{i}"
        kind = rng.choice(["unary", "unary", "binary", "transpose", "concat", "reshape"])
        if kind == "unary":
            op = str(rng.choice(["Relu", "Tanh", "Neg", "Abs", "Sigmoid", "Softsign"]))
            nodes.append(helper.make_node(op, [src], [name]))
        elif kind == "binary":
            op = str(rng.choice(["Add", "Mul", "Sub", "Max"]))
            other = same[int(rng.integers(len(same)))]
            nodes.append(helper.make_node(op, [src, other], [name]))
        elif kind == "transpose":
            perm = [int(p) for p in rng.permutation(len(shape))]
            nodes.append(helper.make_node("Transpose", [src], [name], perm=perm))
            shape = tuple(shape[p] for p in perm)
        elif kind == "concat":
            other = same[int(rng.integers(len(same)))]
            axis = int(rng.integers(len(shape)))
            nodes.append(helper.make_node("Concat", [src, other], [name], axis=axis))
            d = shape[axis]
            shape = shape[:axis] + (d * 2 if isinstance(d, int) else f"2*{d}",) + shape[axis + 1 :]
        else:
            # A free reshape: merge the two last dims, or split the last one in two.
            merged = len(shape) == 3 and all(isinstance(d, int) for d in shape[1:])
            split = len(shape) == 2 and isinstance(shape[1], int) and shape[1] % 2 == 0
            if merged:
                new: Shape = (shape[0], int(shape[1]) * int(shape[2]))
            elif split:
                new = (shape[0], 2, int(shape[1]) // 2)
            else:
                nodes.append(helper.make_node("Relu", [src], [name]))
                values.append((name, shape))
                continue
            dims = [-1, *[int(d) for d in new[1:]]]
            inits.append(helper.make_tensor(f"shape{i}", TensorProto.INT64, [len(dims)], dims))
            nodes.append(helper.make_node("Reshape", [src, f"shape{i}"], [name]))
            shape = new
        values.append((name, shape))
    last, middle = values[-1], values[len(values) // 2]
    outputs = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, [None] * len(s)) for n, s in (last,)
    ]
    if middle[0] != last[0]:
        outputs.append(
            helper.make_tensor_value_info(middle[0], TensorProto.FLOAT, [None] * len(middle[1]))
        )
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))
    graph = helper.make_graph(nodes, f"chain{seed}", [x], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def lowered(model: onnx.ModelProto, pipeline: str) -> ModuleOp:
    """The model imported and run through pipeline text."""
    from rung.importers.onnx import import_model

    module = import_model(model)
    default_registry().build(pipeline).apply(context(), module)
    return module


def input_for(model: onnx.ModelProto, n: int, seed: int) -> np.ndarray:
    dims = model.graph.input[0].type.tensor_type.shape.dim
    shape = [d.dim_value if d.HasField("dim_value") else n for d in dims]
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


CHAINS = [(1, False), (3, False), (2, True)]


@pytest.mark.parametrize(
    ("seed", "dynamic"), CHAINS, ids=[f"{s}-{'dyn' if d else 'static'}" for s, d in CHAINS]
)
def test_chain_with_plan_matches_core_and_no_reuse(seed: int, dynamic: bool) -> None:
    model = random_chain(seed, dynamic)
    planned = lowered(model, UNFUSED)
    separate = planned.clone()
    PlanMemoryPass().apply(context(), planned)
    PlanMemoryPass(no_reuse=True).apply(context(), separate)
    summary = plan_summary(planned)
    assert summary["peak_bytes"] <= summary["arena_bytes"] <= summary["total_bytes"]
    assert plan_summary(separate)["arena_bytes"] == summary["total_bytes"]
    if not dynamic:
        assert summary["arena_bytes"] < summary["total_bytes"], "nothing was shared"
    core = InferenceSession(model, level="core")
    fused = InferenceSession(model, level="kernel")
    for n in (2, 5) if dynamic else (0,):
        x = input_for(model, n, seed)
        want = core.run(None, {"x": x})
        got = evaluate(planned, [x])
        alone = evaluate(separate, [x])
        full = fused.run(None, {"x": x})
        for w, g, a, f in zip(want, got, alone, full, strict=True):
            np.testing.assert_array_equal(g, a)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(f, w, rtol=1e-5, atol=1e-6)


# ---- an independent check of a plan ------------------------------------------------------------


def _roots(func: FuncOp) -> dict[SSAValue, set[kernel.AllocOp]]:
    """The top-level allocs each memref value may be, through views and scf.if results."""
    roots: dict[SSAValue, set[kernel.AllocOp]] = {}

    def of(v: SSAValue) -> set[kernel.AllocOp]:
        return roots.get(v, set())

    for op in func.body.walk():
        if isinstance(op, kernel.AllocOp):
            roots[op.result] = {op}
        elif isinstance(op, kernel.ViewOp | kernel.SubviewOp):
            roots[op.result] = set(of(op.source))
        elif isinstance(op, scf.IfOp):
            for region in op.regions:
                term = region.block.last_op
                assert term is not None
                for r, v in zip(op.results, term.operands, strict=True):
                    roots.setdefault(r, set()).update(of(v))
    return roots


def check_plan(module: ModuleOp) -> None:
    """No two arena buffers live at one top-level op share a byte; heap buffers are freed
    after their last use, unless returned; the recorded sizes agree."""
    func = next(f for f in module.body.block.ops if isinstance(f, FuncOp))
    roots = _roots(func)
    ops = list(func.body.block.ops)
    live: dict[kernel.AllocOp, list[int]] = {}
    freed: dict[kernel.AllocOp, list[int]] = {}
    for i, op in enumerate(ops):
        if isinstance(op, kernel.AllocOp):
            live[op] = [i, i]
    for i, op in enumerate(ops):
        for inner in op.walk():
            for v in inner.operands:
                for root in roots.get(v, ()):
                    if root not in live:
                        continue
                    if isinstance(inner, kernel.DeallocOp):
                        freed.setdefault(root, []).append(i)
                        continue
                    end = len(ops) if isinstance(inner, ReturnOp) else i
                    live[root][1] = max(live[root][1], end)
    arena = [(a, *live[a]) for a in live if a.offset is not None]
    sizes = {}
    for a, _, _ in arena:
        t = a.result.type
        assert isinstance(t, MemRefType)
        width = 8 if t.element_type.name == "index" else (t.element_type.bitwidth + 7) // 8
        sizes[a] = int(np.prod(t.get_shape())) * width
        assert a.offset.value.data % ALIGN == 0
    for i, (a, s1, e1) in enumerate(arena):
        for b, s2, e2 in arena[i + 1 :]:
            if s1 <= e2 and s2 <= e1 and sizes[a] and sizes[b]:
                lo_a, lo_b = a.offset.value.data, b.offset.value.data
                assert lo_a + sizes[a] <= lo_b or lo_b + sizes[b] <= lo_a, (
                    f"{a.result.name_hint} [{s1}, {e1}] and {b.result.name_hint} [{s2}, {e2}] "
                    "are live together and overlap"
                )
    summary = plan_summary(module)
    total = sum((sizes[a] + ALIGN - 1) // ALIGN * ALIGN for a, _, _ in arena)
    assert summary["total_bytes"] == total
    assert summary["peak_bytes"] <= summary["arena_bytes"] <= total
    assert all(a.offset.value.data + sizes[a] <= summary["arena_bytes"] for a, _, _ in arena)
    for a, (_, end) in live.items():
        if a.offset is not None:
            assert a not in freed
        elif end >= len(ops):
            assert a not in freed, f"returned heap buffer {a.result.name_hint} is freed"
        else:
            assert len(freed.get(a, [])) == 1, f"heap buffer {a.result.name_hint} is not freed"
            assert freed[a][0] > end, f"{a.result.name_hint} is freed before its last use"
    for op in func.body.walk():
        if isinstance(op, kernel.AllocOp) and op.parent_op() is not func:
            assert op.offset is None, "an alloc in a loop body got an arena offset"


# ---- random kernel programs ----------------------------------------------------------------------


def random_program(seed: int, length: int = 40) -> str:
    """A kernel-dialect function of `length` random steps over buffers of mixed sizes."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    bufs: list[tuple[str, str]] = [("%x", "memref<8xf32>"), ("%d", "memref<?xf32>")]
    types = ["memref<8xf32>", "memref<100xf32>", "memref<3x5xf32>", "memref<0xf32>",
             "memref<40xi1>", "memref<2xindex>", "memref<?xf32>", "memref<?x4xf32>"]  # fmt: skip
    counter = 0

    def fresh() -> str:
        nonlocal counter
        counter += 1
        return f"%v{counter}"

    def pick() -> tuple[str, str]:
        """Mostly a recent buffer (short lifetimes, so reuse), sometimes any."""
        if rng.random() < 0.75:
            return bufs[len(bufs) - 1 - int(rng.integers(min(4, len(bufs))))]
        return bufs[int(rng.integers(len(bufs)))]

    def zeros(t: str) -> str:
        rank = t.count("x") if "index" not in t else 1
        return ", ".join(["%c0"] * max(rank, 1)) if t != "memref<f32>" else ""

    def touch(body: list[str], name: str, t: str) -> None:
        """A load of element 0 of a (non-empty) buffer inside a loop body."""
        if "0xf32" in t or "f32" not in t:
            return
        body.append(f"      {fresh()} = kernel.load {name}[{zeros(t)}] : {t}")

    lines.append("  %c0 = arith.constant 0 : index")
    lines.append("  %n = kernel.dim %d[0] : memref<?xf32>")
    for _ in range(length):
        kind = rng.choice(["alloc", "alloc", "alloc", "view", "copy", "call", "if", "nested"])
        if kind == "alloc":
            t = str(rng.choice(types))
            name = fresh()
            sizes = "%n" if "?" in t else ""
            lines.append(f"  {name} = kernel.alloc({sizes}) : {t}")
            body: list[str] = []
            for _ in range(int(rng.integers(0, 3))):
                src, st = pick()
                touch(body, src, st)
            if "f32" in t and "0xf32" not in t:
                one = fresh()
                body.append(f"      {one} = arith.constant 1.0 : f32")
                body.append(f"      kernel.store {one}, {name}[{zeros(t)}] : {t}")
            lines.append(f"  kernel.loop (%i{counter}) in (2) [parallel] {{")
            lines.extend(body)
            lines.append("    kernel.yield")
            lines.append("  }")
            bufs.append((name, t))
        elif kind == "view":
            src, st = pick()
            if "?" in st:
                continue
            name = fresh()
            vt = st.replace("memref<", "memref<1x")
            lines.append(f"  {name} = kernel.view {src}() : {st} -> {vt}")
            bufs.append((name, vt))
        elif kind == "copy":
            src, st = pick()
            same = [b for b in bufs if b[1] == st and b[0] not in (src, "%x", "%d")]
            if same:
                dst = same[int(rng.integers(len(same)))][0]
                lines.append(f"  kernel.copy {src}, {dst} : {st}, {st}")
        elif kind == "call":
            picked = [pick(), pick()]
            names = ", ".join(b[0] for b in picked)
            tys = ", ".join(b[1] for b in picked)
            lines.append(f"  kernel.call @work({names}) [] : {tys}")
        elif kind == "if":
            a, at = pick()
            same = [b for b in bufs if b[1] == at]
            b = same[int(rng.integers(len(same)))][0]
            name = fresh()
            lines.append(f"  {name} = scf.if %cond -> ({at}) {{")
            lines.append(f"    scf.yield {a} : {at}")
            lines.append("  } else {")
            lines.append(f"    scf.yield {b} : {at}")
            lines.append("  }")
            bufs.append((name, at))
        else:
            src, st = pick()
            t = str(rng.choice(["memref<16xf32>", "memref<?xf32>"]))
            inner = fresh()
            sizes = "%n" if "?" in t else ""
            lines.append(f"  kernel.loop (%i{counter}) in (3) [parallel] {{")
            lines.append(f"    {inner} = kernel.alloc({sizes}) : {t}")
            body = []
            touch(body, src, st)
            touch(body, inner, t)
            lines.extend(body)
            lines.append(f"    kernel.call @work({inner}, {src}) [] : {t}, {st}")
            lines.append("    kernel.yield")
            lines.append("  }")
    returned = [bufs[int(i)] for i in rng.choice(len(bufs), size=min(3, len(bufs)), replace=False)]
    result_types = ", ".join(t for _, t in returned)
    head = (
        f"func.func @main(%x: memref<8xf32>, %d: memref<?xf32>, %cond: i1) -> ({result_types}) {{"
    )
    ret = f"  func.return {', '.join(n for n, _ in returned)} : {result_types}"
    return "\n".join([head, *lines, ret, "}"])


@pytest.mark.parametrize("seed", range(25))
def test_random_program_plan_has_no_overlap(seed: int) -> None:
    text = random_program(seed)
    module = parse_module(text)
    PlanMemoryPass().apply(context(), module)
    module.verify()
    check_plan(module)
    # Planning again changes nothing: no second dealloc, the same offsets.
    before = str(module)
    PlanMemoryPass().apply(context(), module)
    assert str(module) == before
    alone = parse_module(text)
    PlanMemoryPass(no_reuse=True).apply(context(), alone)
    check_plan(alone)
    assert plan_summary(alone)["arena_bytes"] == plan_summary(alone)["total_bytes"]


@pytest.mark.parametrize("seed", range(20))
def test_random_slots_never_overlap_while_live(seed: int) -> None:
    rng = np.random.default_rng(seed)
    slots = []
    for _ in range(int(rng.integers(1, 60))):
        start = int(rng.integers(0, 50))
        size = int(rng.choice([0, 64, 128, 640, 4096]))
        slots.append(PlanSlot(start, start + int(rng.integers(0, 15)), size))
    arena = place(slots)
    for i, a in enumerate(slots):
        assert a.offset % ALIGN == 0 and a.offset + a.size <= arena
        for b in slots[i + 1 :]:
            if a.overlaps(b) and a.size and b.size:
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset


def test_checker_catches_a_bad_plan() -> None:
    """The independent check would see two live buffers put in the same bytes."""
    module = parse_module(random_program(1))
    PlanMemoryPass().apply(context(), module)
    func = next(f for f in module.body.block.ops if isinstance(f, FuncOp))
    allocs = [
        op for op in func.body.block.ops if isinstance(op, kernel.AllocOp) and op.offset is not None
    ]
    assert len(allocs) > 2
    for op in allocs:
        op.properties["offset"] = IntegerAttr(0, i64)
    with pytest.raises(AssertionError, match="are live together and overlap"):
        check_plan(module)


# ---- peak ---------------------------------------------------------------------------------------


def test_long_chain_needs_about_two_buffers() -> None:
    ops = ["Neg", "Transpose", "Tanh", "Abs", "Sigmoid"]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 32])
    nodes = []
    prev = "x"
    for i in range(40):
        nodes.append(helper.make_node(ops[i % len(ops)], [prev], [f"t{i}"]))
        prev = f"t{i}"
    nodes.append(helper.make_node("Neg", [prev], ["y"]))
    model = helper.make_model(
        helper.make_graph(nodes, "long", [x], [y]), opset_imports=[helper.make_opsetid("", 18)]
    )
    one = 32 * 32 * 4
    module = lowered(model, UNFUSED + ",kernel-plan-memory")
    summary = plan_summary(module)
    assert summary["total_bytes"] >= 40 * one
    assert summary["arena_bytes"] <= 2 * one
    assert summary["peak_bytes"] <= summary["arena_bytes"]
    check_plan(module)
    data = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    want = InferenceSession(model, level="core").run(None, {"x": data})[0]
    np.testing.assert_allclose(evaluate(module, [data])[0], want, rtol=1e-5, atol=1e-6)


def test_plan_summary_reads_the_entry_function() -> None:
    module = parse_module(random_program(3))
    PlanMemoryPass().apply(context(), module)
    summary = plan_summary(module)
    assert set(summary) == {
        "arena_bytes", "peak_bytes", "total_bytes", "arena_buffers", "heap_buffers"
    }  # fmt: skip
    assert summary == plan_summary(module, entry="main")
    with pytest.raises(ValueError, match="no function 'other'"):
        plan_summary(module, entry="other")
