"""Compile time against graph size: generated transformer-like models of 1k, 5k and 20k nodes.

    python bench/graph_size.py [--nodes 1000,5000,20000] [--output bench/GRAPH_SIZE.md]

Each model is a chain of identical blocks (MatMul, Add, LayerNormalization,
Reshape to heads, Transpose, Transpose back, Reshape, Relu, residual Add), so
the work per node is constant and any growth of seconds per node is the
compiler's. The model goes through `rung.runtime.native.compile_model` (the
`rung compile` command) with an empty output folder; the stages are its
timings: import, lower-to-core, lower-to-kernel, C generation, C compile, with
the CPU seconds of rung and of the C compiler (which a busy machine inflates
less than wall-clock ones). Growth is the ratio of seconds per node between
the largest and the smallest model, and the exponent of a power law through
both: 1.0 is linear.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 16
HEADS = 2
SEQ = 4
BLOCK_NODES = 9


def build_model(nodes: int, seed: int = 0) -> onnx.ModelProto:
    """A model of about `nodes` nodes: blocks of `BLOCK_NODES`, each with its own weights."""
    rng = np.random.default_rng(seed)
    blocks = max(1, nodes // BLOCK_NODES)
    graph_nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = [
        numpy_helper.from_array(np.array([1, SEQ, HEADS, HIDDEN // HEADS], np.int64), "heads"),
        numpy_helper.from_array(np.array([1, SEQ, HIDDEN], np.int64), "flat"),
        numpy_helper.from_array(np.ones(HIDDEN, np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(HIDDEN, np.float32), "beta"),
    ]
    x = "x"
    for i in range(blocks):
        w = (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
        b = (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        p = f"blk{i}_"
        graph_nodes += [
            helper.make_node("MatMul", [x, f"w{i}"], [p + "mm"], name=p + "MatMul"),
            helper.make_node("Add", [p + "mm", f"b{i}"], [p + "add"], name=p + "Add"),
            helper.make_node(
                "LayerNormalization",
                [p + "add", "gamma", "beta"],
                [p + "ln"],
                axis=-1,
                name=p + "LayerNorm",
            ),
            helper.make_node("Reshape", [p + "ln", "heads"], [p + "r1"], name=p + "Reshape"),
            helper.make_node("Transpose", [p + "r1"], [p + "t1"], perm=[0, 2, 1, 3], name=p + "T"),
            helper.make_node("Transpose", [p + "t1"], [p + "t2"], perm=[0, 2, 1, 3], name=p + "U"),
            helper.make_node("Reshape", [p + "t2", "flat"], [p + "r2"], name=p + "Reshape2"),
            helper.make_node("Relu", [p + "r2"], [p + "relu"], name=p + "Relu"),
            helper.make_node("Add", [x, p + "relu"], [p + "out"], name=p + "Residual"),
        ]
        x = p + "out"
    graph = helper.make_graph(
        graph_nodes,
        f"chain{nodes}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SEQ, HIDDEN])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, SEQ, HIDDEN])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def compile_and_check(model: onnx.ModelProto, folder: Path) -> tuple[dict[str, float], float]:
    """The stage timings of compiling `model` into `folder` (plus the wall-clock total),
    and the largest difference of the compiled library's output from onnxruntime's,
    relative to the output's scale, so that a fast but wrong compile shows."""
    import onnxruntime as ort

    from rung.runtime.native import NativeModel, compile_model

    path = folder / "model.onnx"
    onnx.save(model, path)
    start, cpu, cc = time.perf_counter(), time.process_time(), _children_cpu()
    result = compile_model(path, folder / "out", prefix="model")
    timings = dict(result.timings)
    timings["total"] = time.perf_counter() - start
    timings["python CPU"] = time.process_time() - cpu
    timings["cc CPU"] = _children_cpu() - cc
    assert result.program is not None
    x = np.random.default_rng(1).standard_normal((1, SEQ, HIDDEN)).astype(np.float32)
    got = NativeModel(result.outdir, result.program).run([x])[0]
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    err = float(np.abs(got - want[0]).max() / max(1.0, float(np.abs(want[0]).max())))
    return timings, err


def _children_cpu() -> float:
    """CPU seconds of the finished child processes (the C compiler's)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU = ("python CPU", "cc CPU")
"""CPU seconds beside the wall-clock stages: on a busy machine they still show the growth."""


def render(rows: list[tuple[int, dict[str, float], float]]) -> str:
    stages = [k for k in rows[0][1] if k != "total" and k not in CPU]
    lines = [
        "<!-- Generated by bench/graph_size.py; do not edit. "
        "Regenerate: python bench/graph_size.py -->",
        "",
        "# Compile time against graph size",
        "",
        f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}.",
        "",
        "Chains of blocks (MatMul, Add, LayerNormalization, Reshape, Transpose, Transpose, "
        f"Reshape, Relu, residual Add) over a [1, {SEQ}, {HIDDEN}] tensor, compiled by "
        "`rung compile` into an empty folder. Wall-clock seconds per stage, and the CPU "
        "seconds of rung (Python) and of the C compiler; *max err* is the largest "
        "difference from onnxruntime relative to the output's scale.",
        "",
        "| nodes | "
        + " | ".join(stages)
        + " | total s | ms per node | python CPU s | cc CPU s | max err |",
        "|---:|" + "---:|" * (len(stages) + 5),
    ]
    for nodes, t, err in rows:
        cells = " | ".join(f"{t[s]:.2f}" for s in stages)
        lines.append(
            f"| {nodes} | {cells} | {t['total']:.2f} | {1000 * t['total'] / nodes:.2f} | "
            f"{t['python CPU']:.2f} | {t['cc CPU']:.2f} | {err:.1e} |"
        )
    (n0, t0, _), (n1, t1, _) = rows[0], rows[-1]
    lines += [
        "",
        "Growth from the smallest to the largest model: seconds per node, largest over "
        "smallest (1.0 = linear), and the exponent k of seconds = c * nodes^k (1.0 = linear):",
        "",
    ]
    for stage in [*stages, "total", *CPU]:
        growth, exponent = _growth(n0, t0[stage], n1, t1[stage])
        lines.append(f"- {stage}: {growth:.2f} per node, exponent {exponent:.2f}")
    return "\n".join(lines) + "\n"


def _growth(n0: int, s0: float, n1: int, s1: float) -> tuple[float, float]:
    """Seconds per node at `n1` over that at `n0`, and log(s1 / s0) / log(n1 / n0)."""
    if s0 <= 0 or s1 <= 0 or n1 == n0:
        return float("nan"), float("nan")
    return (s1 / n1) / (s0 / n0), math.log(s1 / s0) / math.log(n1 / n0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1000,5000,20000", help="comma-separated node counts")
    parser.add_argument("--output", help="write the markdown table here (default: print it)")
    args = parser.parse_args()
    rows = []
    for count in (int(n) for n in args.nodes.split(",")):
        model = build_model(count)
        nodes = len(model.graph.node)
        with tempfile.TemporaryDirectory() as tmp:
            timings, err = compile_and_check(model, Path(tmp))
        print(f"{nodes} nodes: {timings['total']:.1f} s", file=sys.stderr, flush=True)
        rows.append((nodes, timings, err))
    text = render(rows)
    if args.output:
        Path(args.output).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
