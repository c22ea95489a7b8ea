"""Checking rung against torch eager: export a module, run it at rung's levels, compare.

    from torch_cases import check_against_eager

    def test_relu() -> None:
        check_against_eager(torch.nn.ReLU(), (torch.randn(2, 3),))

`check_against_eager` exports the module with `torch.export.export` (with
`dynamic_shapes` when given), builds one `InferenceSession` per level from the
ExportedProgram, and compares every output, flattened in the program's order,
with the module run eagerly: within `rtol` and `atol` scaled by each output's
largest magnitude. `feeds` runs the same compiled session on other inputs (other
batch or sequence sizes), so one library must serve every size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

torch = pytest.importorskip("torch")

LEVELS = ("torch", "core", "kernel")


def export(module: object, args: tuple, dynamic_shapes: object = None) -> object:
    """The module exported with `torch.export`, in eval mode."""
    if isinstance(module, torch.nn.Module):
        module = module.eval()
    else:
        function = module

        class Wrap(torch.nn.Module):
            def forward(self, *xs: object) -> object:
                return function(*xs)  # type: ignore[operator]

        module = Wrap()
    return torch.export.export(module, args, dynamic_shapes=dynamic_shapes)


def eager_outputs(program: object, args: tuple) -> list[np.ndarray]:
    """The exported program's outputs on `args`, run by torch, flattened in output order."""
    with torch.no_grad():
        out = program.module()(*args)  # type: ignore[attr-defined]
    leaves = torch.utils._pytree.tree_leaves(out)
    return [t.detach().numpy() for t in leaves]


def assert_close(
    got: Sequence[object], want: Sequence[np.ndarray], rtol: float, atol: float, what: str
) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        g = np.asarray(g)
        assert g.shape == w.shape, f"{what}: output {i} has shape {g.shape}, expected {w.shape}"
        assert g.dtype == w.dtype, f"{what}: output {i} is {g.dtype}, expected {w.dtype}"
        if w.dtype == np.bool_ or np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w, err_msg=f"{what}: output {i}")
            continue
        scale = float(np.nanmax(np.abs(w))) if w.size and np.isfinite(w).any() else 1.0
        np.testing.assert_allclose(
            g, w, rtol=rtol, atol=atol * max(scale, 1.0), err_msg=f"{what}: output {i}"
        )


def check_against_eager(
    module: object,
    args: tuple,
    *,
    dynamic_shapes: object = None,
    feeds: Sequence[tuple] | None = None,
    levels: Sequence[str] = LEVELS,
    rtol: float = 1e-3,
    atol: float = 1e-4,
) -> object:
    """Export `module` on `args`, run it at each of `levels` on every feed; returns the program."""
    from rung.runtime import InferenceSession

    program = export(module, args, dynamic_shapes)
    runs = list(feeds) if feeds else [args]
    expected = [eager_outputs(program, feed) for feed in runs]
    for level in levels:
        session = InferenceSession(program, level=level)
        names = [i.name for i in session.get_inputs()]
        for feed, want in zip(runs, expected, strict=True):
            inputs = {n: t.detach().numpy() for n, t in zip(names, feed, strict=True)}
            got = session.run(None, inputs)
            shapes = [tuple(t.shape) for t in feed]
            assert_close(got, want, rtol, atol, f"level {level}, inputs {shapes}")
    return program


__all__ = ["LEVELS", "assert_close", "check_against_eager", "eager_outputs", "export"]
