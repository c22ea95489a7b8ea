"""`InferenceSession`: run a model at any level, with onnxruntime's interface.

    from rung.runtime import InferenceSession

    sess = InferenceSession("model.onnx")         # compiled natively (level kernel)
    outputs = sess.run(None, {"x": x})            # list of arrays, in output order
    sess.get_inputs()[0].name, .shape, .type      # like onnxruntime's NodeArg

The model (a ModelProto, a `torch.export.ExportedProgram`, a path to
`.onnx` / `.onnxtxt` / `.pt2` / `.mlir`, or a ModuleOp) is imported into the
onnx or torch dialect (IR of a lower level is taken as it is), lowered to the level by `rung.runtime.levels.lower` and run by the
level's evaluator.
Inputs are checked against the model's declared types before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onnx import ModelProto
from xdsl.dialects.builtin import ModuleOp, TensorType, UnrankedTensorType
from xdsl.ir import Attribute

from rung.errors import RungError

from .levels import Level, get_level, lower


@dataclass(frozen=True)
class NodeArg:
    """An input or output of the model, as onnxruntime describes it."""

    name: str
    shape: list[int | str | None]
    """Dims: an int, the symbolic name (`onnx.dim_params`) or None; [] for non-tensors."""
    type: str
    """onnxruntime's spelling: `tensor(float)`, `seq(tensor(int64))`, `optional(...)`."""
    mlir_type: Attribute

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _node_arg(name: str, type: Attribute, dim_params: Sequence[str]) -> NodeArg:
    from rung.importers.onnx.export import ort_type_string

    return NodeArg(name, _ort_shape(type, dim_params), ort_type_string(type), type)


def _ort_shape(type: Attribute, dim_params: Sequence[str]) -> list[int | str | None]:
    from rung.dialects.onnx import OptType

    if isinstance(type, OptType):
        return _ort_shape(type.element_type, dim_params)
    if not isinstance(type, TensorType):
        return []
    shape: list[int | str | None] = []
    for i, dim in enumerate(type.get_shape()):
        if dim >= 0:
            shape.append(dim)
        else:
            shape.append(dim_params[i] if i < len(dim_params) and dim_params[i] else None)
    return shape


def is_exported_program(model: object) -> bool:
    """Whether `model` is a `torch.export.ExportedProgram` (without importing torch)."""
    return type(model).__name__ == "ExportedProgram" and hasattr(model, "graph_signature")


def load_module(model: ModelProto | str | os.PathLike[str] | ModuleOp | object) -> ModuleOp:
    """The model as a module: ONNX and torch.export programs (`.pt2`) are imported,
    `.mlir` parsed; a ModuleOp is used as is."""
    if isinstance(model, ModuleOp):
        return model
    if isinstance(model, ModelProto):
        from rung.importers.onnx import import_model

        return import_model(model)
    if is_exported_program(model):
        from rung.importers.torch import import_program

        return import_program(model)
    if not isinstance(model, str | os.PathLike):
        raise RungError(
            "expected a ModelProto, a torch.export.ExportedProgram, a ModuleOp or a path "
            f"to a model, got {type(model).__name__}"
        )
    path = Path(model)
    if path.suffix == ".pt2":
        from rung.importers.torch import import_program

        return import_program(path)
    if path.suffix == ".mlir":
        from xdsl.utils.exceptions import ParseError, VerifyException

        from rung.dialects import parse_error_text, parse_module

        if not path.is_file():
            raise RungError(f"no such file: '{path}'")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise RungError(f"cannot read '{path}': {err}") from None
        try:
            return parse_module(text, str(path))
        except ParseError as err:
            raise RungError(parse_error_text(err)) from None
        except VerifyException as err:
            raise RungError(f"'{path}': {str(err).strip()}") from None
    from rung.importers.onnx import import_model

    return import_model(path)


class InferenceSession:
    """Runs a model at one level: `kernel` (compiled C, the default), `core`, `onnx` or `torch`.

    See `rung.runtime.levels.level_names()` for every registered level.
    """

    def __init__(
        self,
        model: ModelProto | str | os.PathLike[str] | ModuleOp | object,
        level: str = "kernel",
    ) -> None:
        from rung.dialects.signature import io_dim_params, io_names, main_function

        self.level: Level = get_level(level)
        source = model if isinstance(model, str | os.PathLike) else None
        where = f"'{source}'" if source is not None else "the model"
        module = load_module(model)
        func = main_function(module)
        in_names, out_names = io_names(func)
        self._inputs = [
            _node_arg(name, arg.type, io_dim_params(func.arg_attrs, i))
            for i, (name, arg) in enumerate(zip(in_names, func.args, strict=True))
        ]
        self._outputs = [
            _node_arg(name, t, io_dim_params(func.res_attrs, i))
            for i, (name, t) in enumerate(
                zip(out_names, func.function_type.outputs.data, strict=True)
            )
        ]
        self._plain = [_plain_spec(arg) for arg in self._inputs]
        self.source_module = module
        # Lowering works in place: a module the caller gave is lowered as a copy.
        self.module = lower(module, self.level, where=where, copy=isinstance(model, ModuleOp))

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_modelmeta(self) -> None:  # pragma: no cover - onnxruntime parity placeholder
        return None

    def run(
        self,
        output_names: Sequence[str] | None,
        input_feed: Mapping[str, object],
    ) -> list[object]:
        """Outputs (all, or those named) for the inputs in `input_feed`, like onnxruntime."""
        args = self._check_inputs(input_feed)
        indices = self._output_indices(output_names)
        results = self.level.evaluator(self.module, args)
        if len(results) != len(self._outputs):
            raise RungError(
                f"level '{self.level.name}' returned {len(results)} outputs, "
                f"the model has {len(self._outputs)}"
            )
        return [results[i] for i in indices]

    def _output_indices(self, output_names: Sequence[str] | None) -> list[int]:
        if output_names is None:
            return list(range(len(self._outputs)))
        if isinstance(output_names, str):
            raise RungError("output_names must be a list of names (or None for all)")
        by_name = {o.name: i for i, o in reversed(list(enumerate(self._outputs)))}
        indices = []
        for name in output_names:
            if name not in by_name:
                known = ", ".join(f"'{o.name}'" for o in self._outputs)
                raise RungError(f"unknown output '{name}'; the model's outputs are {known}")
            indices.append(by_name[name])
        return indices

    def _check_inputs(self, feed: Mapping[str, object]) -> list[object]:
        if not isinstance(feed, Mapping):
            raise RungError(
                f"input_feed must be a dict of name -> array, got {type(feed).__name__}"
            )
        expected = {i.name for i in self._inputs}
        for name in feed:
            if name not in expected:
                known = ", ".join(f"'{i.name}'" for i in self._inputs) or "none"
                raise RungError(f"unknown input '{name}'; the model's inputs are {known}")
        args: list[object] = []
        missing = []
        for arg, plain in zip(self._inputs, self._plain, strict=True):
            value = feed.get(arg.name)
            if plain is not None and type(value) is np.ndarray and _fits(value, *plain):
                args.append(value)  # the common case, checked without building messages
                continue
            if arg.name not in feed:
                if arg.type.startswith("optional("):
                    args.append(None)  # an absent optional input is an empty optional
                    continue
                missing.append(arg)
                args.append(None)
                continue
            args.append(check_value(arg, feed[arg.name]))
        if missing:
            listed = ", ".join(f"'{a.name}' ({a.type} {_shape_text(a.shape)})" for a in missing)
            raise RungError(f"missing input{'s' if len(missing) > 1 else ''} {listed}")
        check_named_dims(self._inputs, args)
        return args


def _plain_spec(arg: NodeArg) -> tuple[np.dtype, tuple[int, ...]] | None:
    """A plain numeric tensor input's dtype and declared dims (-1 where any size goes);
    None for strings, sequences, optionals and maps, which `check_value` handles."""
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    t = arg.mlir_type
    if not isinstance(t, TensorType) or isinstance(t.element_type, StringType):
        return None
    try:
        return np.dtype(numpy_dtype(t.element_type)), tuple(t.get_shape())
    except Exception:  # noqa: BLE001  (an element numpy lacks: the slow path reports it)
        return None


def _fits(value: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> bool:
    if value.dtype != dtype or value.ndim != len(shape):
        return False
    return all(d < 0 or d == n for d, n in zip(shape, value.shape, strict=True))


def check_named_dims(args: Sequence[NodeArg], values: Sequence[object]) -> None:
    """Inputs whose dims share a symbolic name (`batch`, `sequence`) must agree on its size.

    The model says they are one size; a run that fed two would read past the
    smaller input or mix rows, so it fails here with both inputs named.
    """
    seen: dict[str, tuple[str, int, int]] = {}
    for arg, value in zip(args, values, strict=True):
        if not isinstance(value, np.ndarray):
            continue
        for axis, dim in enumerate(arg.shape):
            if not isinstance(dim, str) or axis >= value.ndim:
                continue
            size = int(value.shape[axis])
            if dim not in seen:
                seen[dim] = (arg.name, axis, size)
                continue
            first, first_axis, first_size = seen[dim]
            if size != first_size:
                raise RungError(
                    f"input '{arg.name}': dimension {axis} ('{dim}') is {size}, but input "
                    f"'{first}' has {first_size} in its dimension {first_axis} of the same "
                    f"name '{dim}'"
                )


def _shape_text(shape: Sequence[int | str | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def check_value(arg: NodeArg, value: object) -> object:
    """Check one input against its declared type; returns the value to pass on."""
    from rung.dialects.onnx import OptType, SeqType

    type = arg.mlir_type
    if isinstance(type, OptType):
        if value is None:
            return None
        type = type.element_type
    if isinstance(type, SeqType):
        return _check_sequence(arg, type, value)
    if not isinstance(type, TensorType | UnrankedTensorType):
        return value  # maps: passed through
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise RungError(
            f"input '{arg.name}': expected a numpy array of {arg.type}, got {type_name(value)}"
        )
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    if isinstance(type.element_type, StringType):
        if value.dtype.kind not in "OUS":
            raise RungError(
                f"input '{arg.name}': expected {arg.type} (strings), got dtype {value.dtype}"
            )
        if value.dtype.kind != "O":
            value = value.astype(object)
    else:
        want = numpy_dtype(type.element_type)
        if value.dtype != want:
            raise RungError(
                f"input '{arg.name}': expected dtype {want} ({arg.type}), got {value.dtype}"
            )
    if isinstance(type, TensorType):
        shape = type.get_shape()
        if value.ndim != len(shape):
            raise RungError(
                f"input '{arg.name}': expected rank {len(shape)} (shape "
                f"{_shape_text(arg.shape)}), got rank {value.ndim} (shape {list(value.shape)})"
            )
        for axis, (want_dim, got_dim) in enumerate(zip(shape, value.shape, strict=True)):
            if want_dim >= 0 and want_dim != got_dim:
                raise RungError(
                    f"input '{arg.name}': dimension {axis} must be {want_dim} (shape "
                    f"{_shape_text(arg.shape)}), got shape {list(value.shape)}"
                )
    return value


def _check_sequence(arg: NodeArg, type: Attribute, value: object) -> list[np.ndarray]:
    """A sequence input: a list (or tuple) of arrays of its element type, strings as object
    arrays of `str` (the element shapes are the model's to check)."""
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    if not isinstance(value, list | tuple):
        raise RungError(
            f"input '{arg.name}': expected a sequence ({arg.type}) as a list of numpy arrays, "
            f"got {type_name(value)}"
        )
    element = getattr(type.element_type, "element_type", None)  # type: ignore[attr-defined]
    items = []
    for i, item in enumerate(value):
        if isinstance(item, np.generic):
            item = np.asarray(item)
        if not isinstance(item, np.ndarray):
            raise RungError(
                f"input '{arg.name}': element {i} of the sequence must be a numpy array, "
                f"got {type_name(item)}"
            )
        if isinstance(element, StringType):
            if item.dtype.kind not in "OUS":
                raise RungError(
                    f"input '{arg.name}': element {i} of the sequence must hold strings, got "
                    f"dtype {item.dtype}"
                )
            item = item.astype(object)
        elif element is not None and item.dtype != numpy_dtype(element):
            raise RungError(
                f"input '{arg.name}': element {i} of the sequence must be of "
                f"{numpy_dtype(element)} ({arg.type}), got {item.dtype}"
            )
        items.append(item)
    return items


def type_name(value: object) -> str:
    if isinstance(value, list | tuple):
        return "a sequence (list)"
    if isinstance(value, dict):
        return "a map (dict)"
    if value is None:
        return "None"
    return type(value).__name__


__all__ = ["InferenceSession", "NodeArg", "load_module", "random_inputs", "read_array"]


# ---- inputs for `rung run` ----------------------------------------------------------------


def read_array(path: str, name: str = "") -> np.ndarray:
    """An input array from a `.npy` file (or a serialized TensorProto `.pb`)."""
    what = f"input '{name}'" if name else "input"
    p = Path(path)
    if not p.is_file():
        raise RungError(f"cannot read {what}: no such file '{path}'")
    if p.suffix == ".pb":
        from onnx import TensorProto, numpy_helper

        tensor = TensorProto()
        try:
            tensor.ParseFromString(p.read_bytes())
            return numpy_helper.to_array(tensor)
        except Exception as err:
            raise RungError(
                f"cannot read {what} from '{path}': not a TensorProto ({err})"
            ) from None
    try:
        with open(p, "rb") as f:
            magic = f.read(6)
    except OSError as err:
        raise RungError(f"cannot read {what} from '{path}': {err.strerror}") from None
    if magic != b"\x93NUMPY":
        raise RungError(f"cannot read {what} from '{path}': not a .npy file (no NumPy header)")
    try:
        value = np.load(p, allow_pickle=False)
    except Exception as err:
        raise RungError(
            f"cannot read {what} from '{path}': bad .npy file ({_one_line(err)})"
        ) from None
    return value


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def random_inputs(
    inputs: Sequence[NodeArg], *, seed: int = 0, dims: Mapping[str, int] | None = None
) -> dict[str, object]:
    """Random values for the given inputs, from their declared types and shapes.

    Unknown dims are 1 unless `dims` names them (by their symbolic name); floats
    are standard normal, integers in [0, 10), strings short words. Sequences get
    one element, maps one entry, optionals a value.
    """
    rng = np.random.default_rng(seed)
    dims = dict(dims or {})
    return {arg.name: _random_value(arg.mlir_type, arg.shape, rng, dims) for arg in inputs}


def _random_value(
    type: Attribute, shape: Sequence[int | str | None], rng: np.random.Generator, dims: dict
) -> object:
    from rung.dialects.onnx import MapType, OptType, SeqType

    if isinstance(type, OptType):
        return _random_value(type.element_type, shape, rng, dims)
    if isinstance(type, SeqType):
        inner = type.element_type
        return [_random_value(inner, _ort_shape(inner, ()), rng, dims)]
    if isinstance(type, MapType):
        key = _random_array(type.key_type, (), rng)
        value = type.value_type
        if isinstance(value, TensorType | UnrankedTensorType | SeqType | MapType | OptType):
            item = _random_value(value, _ort_shape(value, ()), rng, dims)
        else:
            item = _random_array(value, (), rng)
        return {key.item(): item}
    if not isinstance(type, TensorType | UnrankedTensorType):
        raise RungError(f"cannot generate a random value of type {type}")
    if isinstance(type, UnrankedTensorType):
        concrete: tuple[int, ...] = (1,)
    else:
        concrete = tuple(
            d if isinstance(d, int) else dims.get(d, 1) if isinstance(d, str) else 1 for d in shape
        )
    count = int(np.prod(concrete, dtype=object))
    if count > _RANDOM_LIMIT:  # a declared shape no memory holds: refuse, not crash
        raise RungError(
            f"an input of shape {list(concrete)} has {count} elements, too many to make up "
            "random values for; give its value instead"
        )
    return _random_array(type.element_type, concrete, rng)


_RANDOM_LIMIT = 2**28
"""The most elements `random_inputs` makes for one input."""


def _random_array(
    element: Attribute, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    if isinstance(element, StringType):
        words = np.array(["alpha", "beta", "gamma", "delta", "rung"], dtype=object)
        return rng.choice(words, size=shape).astype(object)
    dtype = numpy_dtype(element)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    values = rng.standard_normal(shape)
    if dtype.kind == "V":  # ml_dtypes: small floats and sub-byte ints
        try:
            np.iinfo(dtype)
            values = rng.integers(0, 2, size=shape)
        except ValueError:
            pass
    return np.asarray(values).astype(dtype)
