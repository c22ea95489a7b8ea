"""rung's `cse`, `dce` and `rewrite_each` against what they take the place of in xDSL.

rung's `cse` and `dce` claim xDSL's results in less time, and the kernel
passes claim the same rewrites from `rewrite_each` as from xDSL's walker: each
is run here beside xDSL's on the modules rung's pipelines give them (real
models and control-flow node cases, at core and at kernel), and the printed
modules must be equal.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
import pytest
from onnx_cases import graph_size_bench, light_models, node_cases
from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.common_subexpression_elimination import cse as xdsl_cse
from xdsl.transforms.dead_code_elimination import region_dce

from rung.dialects import context, print_module
from rung.importers.onnx import import_model
from rung.lowering.generic.cse import eliminate_common_subexpressions
from rung.lowering.generic.dce import eliminate_dead_code
from rung.lowering.pipelines import pipeline_options
from rung.runtime.levels import lower


def _models() -> dict[str, Callable[[], onnx.ModelProto]]:
    found: dict[str, Callable[[], onnx.ModelProto]] = {
        "chain": lambda: graph_size_bench().build_model(120),
    }
    for path in light_models()[:3]:
        found[path.stem] = lambda path=path: onnx.load(str(path))
    for name in (
        "test_loop11",
        "test_if_seq",
        "test_scan9_sum",
    ):
        found[name] = lambda name=name: node_cases()[name].model  # type: ignore[attr-defined]
    return found


MODELS = _models()


FUSED = "kernel-fuse-elementwise,kernel-fuse-epilogue,kernel-drop-dead-buffers"


def _stage(model: onnx.ModelProto, stage: str, kernel_passes: str = FUSED) -> ModuleOp:
    """The module as `cse` first sees it on the way to `stage` ("core" or "kernel"): the
    stage's pipeline, stopped before its `cse` (at kernel, `kernel_passes` after the
    conversion)."""
    core = (
        "convert-onnx-to-core,convert-torch-to-core,core-fold-constants,core-hoist-loop-invariants"
    )
    kernel = f"core-prune-conv-taps,dce,convert-core-to-kernel,{kernel_passes}".rstrip(",")
    module = import_model(model)
    if stage == "kernel":
        module = lower(module, "core")
    with pipeline_options(replace={"lower-to-core": core, "core-to-kernel": kernel}):
        return lower(module, stage)


def _text(module: ModuleOp) -> str:
    """The printed ops (a clone shares its original's weights, which print after them)."""
    return print_module(module).split("\n{-#", 1)[0]


@pytest.mark.parametrize("stage", ["core", "kernel"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_cse_and_dce_match_xdsl(name: str, stage: str) -> None:
    ours = _stage(MODELS[name](), stage)
    theirs = ours.clone()
    before = _text(ours)
    assert _text(theirs) == before
    eliminate_common_subexpressions(ours)
    xdsl_cse(theirs)
    assert _text(ours) == _text(theirs)
    eliminate_dead_code(ours.body)
    region_dce(theirs.body)
    assert _text(ours) == _text(theirs)
    if name == "chain":  # the comparison is not of two untouched modules
        assert _text(ours) != before


def test_rewrite_each_matches_the_walker() -> None:
    """The kernel passes, driven by `rewrite_each`, rewrite as xDSL's walker did."""
    from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

    from rung.lowering.kernel_opt import coalesce, epilogue, fuse, interchange, parallelize

    module = _stage(MODELS["chain"](), "kernel", kernel_passes="")
    before = _text(module)
    theirs = module.clone()
    ctx = context()
    for pass_ in (
        fuse.FuseElementwisePass(),
        epilogue.FuseEpiloguePass(),
        interchange.InterchangePass(),
        coalesce.CoalescePass(),
        parallelize.ParallelizePass(),
    ):
        pass_.apply(ctx, module)
    walkers = [
        PatternRewriteWalker(fuse.FoldDimOfAlloc(), apply_recursively=False),
        PatternRewriteWalker(
            GreedyRewritePatternApplier([fuse.InlineElementwiseProducer(written={})]),
            apply_recursively=True,
        ),
        PatternRewriteWalker(epilogue.FuseEpilogue(), apply_recursively=True),
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [interchange.AccumulateInMemory(), interchange.InterchangeForUnitStride()]
            ),
            apply_recursively=False,
        ),
        PatternRewriteWalker(coalesce.CoalesceDims(), apply_recursively=False),
        PatternRewriteWalker(parallelize.DropUnitDims(), apply_recursively=False),
        PatternRewriteWalker(parallelize.HoistParallelDim(), apply_recursively=False),
        PatternRewriteWalker(parallelize.MarkParallelLoop(), apply_recursively=False),
    ]
    for walker in walkers:
        walker.rewrite_module(theirs)
    assert _text(module) == _text(theirs)
    assert _text(module).count("kernel.alloc") < before.count("kernel.alloc")  # it fused
