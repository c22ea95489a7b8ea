"""Command-line entry points (`opt`, `rung`) and the onnx dialect generator, kept thin."""
