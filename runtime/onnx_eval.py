"""The onnx level's reference execution: each op of an onnx-dialect module, run by onnx.reference.

`OnnxEvaluator` walks the main `func.func` op by op. Each op is written back as
an ONNX node (`rung.importers.onnx.export`) inside a one-node model at the
module's opsets, and run by `onnx.reference.ReferenceEvaluator`. Evaluators are
cached by the one-node model's bytes, so identical ops (same attributes and
input types) share one.

Ops with graph attributes (If, Loop, Scan, SequenceMap, …) are exported with
their regions as subgraphs and run by onnx.reference as a whole; values a
region uses from the enclosing function become extra inputs of the one-node
model, so onnx.reference sees them as outer-scope values. The per-op callback
(`on_op`) therefore sees such an op as one step.

`onnx.Custom` ops run when onnx.reference knows their domain
(`ai.onnx.preview.training`, `ai.onnx.preview`, `experimental`); others raise
`UnsupportedOpError`. `evaluate_whole_model` is the fast path: the module
rebuilt as one ModelProto and run in one ReferenceEvaluator.
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from onnx import ModelProto, helper
from xdsl.dialects.builtin import ModuleOp, TensorType, UnrankedTensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue

from rung.dialects.onnx.generated_ops import ConstantOp
from rung.errors import RungError
from rung.importers.onnx.export import (
    GraphExporter,
    check_onnx_module,
    constant_array,
    main_function,
    module_opsets,
    module_to_model,
    numpy_dtype,
    op_domain_type,
    op_label,
    opset_protos,
    value_info,
)

from .levels import EvaluationError, UnsupportedOpError

OpCallback = Callable[[Operation, list[object], list[object]], None]
"""Called after each top-level op with its inputs and outputs (None where absent)."""

_CACHE_LIMIT = 4096
_CACHE_KEY_LIMIT = 1 << 20
_evaluators: OrderedDict[bytes, object] = OrderedDict()


_FIXES: list[type] | None = None


def reference_fixes() -> list[type]:
    """Replacements for onnx.reference ops that disagree with the ONNX spec.

    - `Optional` wraps its value in a list (`[x]`, and `[None]` for an empty
      optional, which `OptionalHasElement` then calls non-empty); the spec's
      optional is the value itself or nothing.
    - `Loop` joins scan outputs with `np.vstack`, which turns scalars into
      `[N, 1]` and concatenates (rather than stacks) tensors of rank 2 or more;
      the spec stacks them along a new first axis.

    They are passed as `new_ops`, so they also apply inside subgraphs.
    """
    global _FIXES
    if _FIXES is not None:
        return _FIXES
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops.op_loop import Loop as _ReferenceLoop

    class Optional(OpRun):
        op_domain = ""

        def _run(self, x: object = None, type: object = None) -> tuple[object]:  # noqa: A002
            return (x,)

    class Loop(_ReferenceLoop):
        op_domain = ""

        def _run(  # type: ignore[override]
            self,
            M: np.ndarray | None,
            cond: np.ndarray | None,
            *args: object,
            context: dict | None = None,
            body: object = None,
            attributes: object = None,
            bindings: object = None,
        ) -> tuple:
            # onnx.reference's Loop._run, with the scan outputs stacked.
            graph = self.body
            names = graph.input_names
            inputs: dict[str, object] = dict.fromkeys(names)
            for name, value in zip(names[2:], args, strict=False):
                inputs[name] = value
            if context is not None:
                inputs.update(context)
            scans: list[list[object]] = [[] for _ in range(self.K)]
            outputs: list[object] = []
            if cond is None:  # no condition given: a for loop (the body still sees `true`)
                cond = np.array(True)
            it = 0
            while bool(cond) and (M is None or it < M):
                if len(names) > 0 and names[0]:
                    inputs[names[0]] = np.array(it, dtype=None if M is None else M.dtype)
                if len(names) > 1 and names[1]:
                    inputs[names[1]] = cond
                outputs = list(self._run_body(inputs, attributes=attributes, bindings=bindings))
                for k in range(self.K):
                    scans[k].append(outputs[len(outputs) - self.K + k])
                cond = outputs[self.output_index[graph.output_names[0]]]
                if cond is None:
                    raise RuntimeError("the Loop body's condition output is None")
                for i, o in zip(names[2:], graph.output_names[1:], strict=False):
                    inputs[i] = outputs[self.output_index[o]]
                it += 1
            if it == 0:
                results = [inputs[i] for i in names[2:]]
            else:
                results = outputs[1 : 1 + self.N]
            results.extend(_stack(scan) for scan in scans)
            while len(results) < len(self.onnx_node.output):
                results.append(np.empty(shape=()))
            return self._check_and_fix_outputs(tuple(results))

    _FIXES = [Optional, Loop]
    return _FIXES


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    """Scan outputs of a Loop: stacked along a new first axis (np.vstack concatenates)."""
    if not arrays:
        return np.empty((0,), dtype=np.float32)
    return np.stack([np.asarray(a) for a in arrays])


def _reference_evaluator(model: ModelProto, label: str, domain: str, op_type: str) -> object:
    """A ReferenceEvaluator for a one-node model, shared between identical ops."""
    key = model.SerializeToString()
    cached = _evaluators.get(key)
    if cached is not None:
        _evaluators.move_to_end(key)
        return cached
    from onnx.reference import ReferenceEvaluator

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            evaluator = ReferenceEvaluator(model, new_ops=reference_fixes())
    except Exception as err:
        text = str(err)
        if _is_missing_implementation(err, text):
            raise UnsupportedOpError(
                f"no reference implementation for {domain or 'ai.onnx'}::{op_type} ({label})"
            ) from None
        raise EvaluationError(
            f"{label}: onnx.reference cannot load it: {type(err).__name__}: {_first_line(text)}"
        ) from None
    if len(key) <= _CACHE_KEY_LIMIT:
        _evaluators[key] = evaluator
        if len(_evaluators) > _CACHE_LIMIT:
            _evaluators.popitem(last=False)
    return evaluator


def _is_missing_implementation(err: Exception, text: str) -> bool:
    name = type(err).__name__
    return (
        name in ("RuntimeImplementationError", "NotImplementedError")
        or "No registered implementation" in text
        or "is unknown" in text
        or "is not specified" in text
        or "No implementation was found" in text
    )


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= 300 else line[:297] + "..."


@dataclass
class _Step:
    """How one top-level op runs: the values it reads, in model-input order, and how."""

    op: Operation
    feeds: list[tuple[str, SSAValue]]
    outputs: list[SSAValue]
    evaluator: object | None = None
    constant: np.ndarray | None = None


class OnnxEvaluator:
    """Evaluates the main function of an onnx-dialect module, op by op."""

    def __init__(self, module: ModuleOp) -> None:
        check_onnx_module(module)
        self.module = module
        self.func = main_function(module)
        self.opsets = module_opsets(module)
        self._steps: dict[Operation, _Step] = {}

    def run(self, inputs: Sequence[object], on_op: OpCallback | None = None) -> list[object]:
        """The function's outputs for positional `inputs` (in argument order)."""
        block = self.func.body.block
        if len(inputs) != len(block.args):
            raise RungError(
                f"function '{self.func.sym_name.data}' takes {len(block.args)} inputs, "
                f"got {len(inputs)}"
            )
        env: dict[SSAValue, object] = dict(zip(block.args, inputs, strict=True))
        for op in block.ops:
            if isinstance(op, ReturnOp):
                return [_fresh(env[v]) for v in op.operands]
            outputs = self.eval_op(op, env)
            for value, result in zip(op.results, outputs, strict=True):
                env[value] = result
            if on_op is not None:
                on_op(op, _inputs_of(op, env), list(outputs))
        raise RungError(f"function '{self.func.sym_name.data}' has no func.return")

    def eval_op(self, op: Operation, env: dict[SSAValue, object]) -> list[object]:
        """Run one op on values from `env`; returns one value per result."""
        step = self._steps.get(op)
        if step is None:
            step = self._prepare(op)
            self._steps[op] = step
        if step.constant is not None:
            return [step.constant]
        feeds = {name: env[value] for name, value in step.feeds}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                results = step.evaluator.run(None, feeds)  # type: ignore[union-attr]
        except RungError:
            raise
        except ImportError as err:
            domain, op_type = op_domain_type(op)
            raise UnsupportedOpError(
                f"the reference implementation of {domain or 'ai.onnx'}::{op_type} "
                f"({op_label(op)}) is not available: {_first_line(str(err))}"
            ) from None
        except Exception as err:
            raise EvaluationError(
                f"{op_label(op)} failed: {type(err).__name__}: {_first_line(str(err))}"
            ) from err
        if len(results) != len(step.outputs):
            raise EvaluationError(
                f"{op_label(op)}: onnx.reference gave {len(results)} outputs, "
                f"expected {len(step.outputs)}"
            )
        return [_as_value(r, v) for r, v in zip(results, step.outputs, strict=True)]

    def _prepare(self, op: Operation) -> _Step:
        domain, op_type = op_domain_type(op)
        label = op_label(op)
        if isinstance(op, ConstantOp) and set(op.onnx_attributes()) == {"value"}:
            value = op.properties["value"]
            try:
                array = constant_array(value, self.module)
            except RungError as err:
                raise EvaluationError(f"{label}: {err.message}") from None
            array.flags.writeable = False  # shared by every run
            return _Step(op, [], list(op.results), constant=array)

        # Names local to the one-node model: inputs i<k>, outputs o<k>, values
        # inside regions r<k>, outer-scope values the regions use c<k>.
        names: dict[SSAValue, str] = {}
        feeds: list[tuple[str, SSAValue]] = []
        for k, value in enumerate(op.onnx_inputs()):  # type: ignore[attr-defined]
            if value is not None and value not in names:
                names[value] = f"i{k}"
                feeds.append((f"i{k}", value))
        outputs: list[SSAValue] = []
        for k, value in enumerate(op.onnx_outputs()):  # type: ignore[attr-defined]
            if value is not None:
                names[value] = f"o{k}"
                outputs.append(value)
        inner: set[SSAValue] = set()
        for region in op.regions:
            for inner_op in region.walk():
                inner.update(inner_op.results)
                for r in inner_op.regions:
                    for b in r.blocks:
                        inner.update(b.args)
            for b in region.blocks:
                inner.update(b.args)
        counter = {"r": 0, "c": 0}

        def namer(value: SSAValue) -> str:
            name = names.get(value)
            if name is None:
                kind = "r" if value in inner else "c"
                name = f"{kind}{counter[kind]}"
                counter[kind] += 1
                names[value] = name
                if kind == "c":
                    feeds.append((name, value))
            return name

        try:
            node = GraphExporter(self.module, namer).node(op)
        except RungError as err:
            raise EvaluationError(
                f"{label}: cannot write it as an ONNX node: {err.message}"
            ) from None
        node.name = ""  # identical ops share one evaluator, wherever they are
        graph = helper.make_graph(
            [node],
            "op",
            [value_info(name, value.type) for name, value in feeds],
            [value_info(names[value], value.type) for value in outputs],
        )
        model = helper.make_model(graph, opset_imports=opset_protos(self.opsets))
        evaluator = _reference_evaluator(model, label, domain, op_type)
        return _Step(op, feeds, outputs, evaluator=evaluator)


def _fresh(value: object) -> object:
    """Constants are shared between runs: the caller gets its own copy."""
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value.copy()
    return value


def _inputs_of(op: Operation, env: dict[SSAValue, object]) -> list[object]:
    values = op.onnx_inputs() if hasattr(op, "onnx_inputs") else list(op.operands)  # type: ignore[attr-defined]
    return [None if v is None else env[v] for v in values]


def _as_value(result: object, value: SSAValue) -> object:
    """onnx.reference sometimes returns numpy scalars or Python numbers for tensors."""
    type = value.type
    if isinstance(type, TensorType | UnrankedTensorType) and not isinstance(result, np.ndarray):
        if result is None:
            return None
        try:
            return np.asarray(result, dtype=numpy_dtype(type.element_type))
        except (TypeError, ValueError, RungError):
            return np.asarray(result)
    return result


_EVALUATORS: weakref.WeakKeyDictionary[ModuleOp, OnnxEvaluator] = weakref.WeakKeyDictionary()


def evaluator_for(module: ModuleOp) -> OnnxEvaluator:
    """The module's evaluator, kept for as long as the module lives (runs reuse it)."""
    evaluator = _EVALUATORS.get(module)
    if evaluator is None:
        evaluator = OnnxEvaluator(module)
        _EVALUATORS[module] = evaluator
    return evaluator


def evaluate(module: ModuleOp, inputs: Sequence[object]) -> list[object]:
    """The onnx level's evaluator: run the module's main function op by op."""
    return evaluator_for(module).run(inputs)


def evaluate_whole_model(module: ModuleOp, inputs: Sequence[object]) -> list[object]:
    """The fast path: rebuild the ModelProto and run it in one ReferenceEvaluator."""
    from onnx.reference import ReferenceEvaluator

    model = module_to_model(module)
    names = [i.name for i in model.graph.input]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            evaluator = ReferenceEvaluator(model, new_ops=reference_fixes())
            results = evaluator.run(None, dict(zip(names, inputs, strict=True)))
    except Exception as err:
        raise EvaluationError(
            f"onnx.reference failed on the model: {type(err).__name__}: {_first_line(str(err))}"
        ) from err
    func = main_function(module)
    return [
        _as_value(r, v)
        for r, v in zip(results, func.body.block.last_op.operands, strict=True)  # type: ignore[union-attr]
    ]


__all__ = ["OnnxEvaluator", "OpCallback", "evaluate", "evaluate_whole_model", "evaluator_for"]
