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
        [
            sys.executable,
            "-m",
            "rung.tools.cli",
            "import",
            str(EXAMPLES / "tiny_cnn.onnx"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    for op in ("onnx.Conv", "onnx.MaxPool", "onnx.GlobalAveragePool", "onnx.Gemm", "onnx.Softmax"):
        assert op in text
    assert 'loc("conv1")' in text
    assert "tensor<?x1x28x28xf32>" in text
    assert "dialect_resources" in text
    assert "onnx.original_opset_import = {ai.onnx = 13 : i64}" in text


def test_readme_plugin_example_works(tmp_path: Path) -> None:
    import re

    readme = (EXAMPLES.parent / "README.md").read_text()
    code = re.search(r"```python\n# my_patterns.py\n(.*?)```", readme, re.S)
    assert code is not None
    (tmp_path / "my_patterns.py").write_text(code.group(1))
    model = tmp_path / "m.onnxtxt"
    model.write_text(
        '<ir_version: 8, opset_import: ["" : 21, "com.example" : 1]>\n'
        "g (float[2] x) => (float[2] y) {\n  t = com.example.Frob(x)\n  y = Relu(t)\n}\n"
    )
    before = subprocess.run(
        [sys.executable, "-m", "rung.tools.opt", str(model)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert before.returncode == 0, before.stderr
    assert '"com.example" "Frob"' in before.stdout
    for flags in (["-p", "drop-frob"], ["--my-cleanup"]):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "rung.tools.opt",
                "--load-plugin",
                str(tmp_path / "my_patterns.py"),
                str(model),
                *flags,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "Frob" not in result.stdout
        assert "%y = onnx.Relu(%x)" in result.stdout
