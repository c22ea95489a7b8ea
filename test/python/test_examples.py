"""The example model is in sync with its script, and the README's main command works on it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def load_script() -> object:
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", EXAMPLES / "make_tiny_cnn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_model_is_generated_by_its_script() -> None:
    built = load_script().build()  # type: ignore[attr-defined]
    shipped = (EXAMPLES / "tiny_cnn.onnx").read_bytes()
    assert built.SerializeToString() == shipped, "run: python examples/make_tiny_cnn.py"


def test_readme_main_command(tmp_path: Path) -> None:
    out = tmp_path / "tiny_cnn.mlir"
    result = subprocess.run(
        [sys.executable, "-m", "rung.tools.cli", "import", str(EXAMPLES / "tiny_cnn.onnx"),
         "-o", str(out)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    for op in ("onnx.Conv", "onnx.MaxPool", "onnx.GlobalAveragePool", "onnx.Gemm", "onnx.Softmax"):
        assert op in text
    assert 'loc("conv1")' in text
    assert "tensor<?x1x28x28xf32>" in text
    assert "dialect_resources" in text
    assert "onnx.original_opset_import = {ai.onnx = 13 : i64}" in text
