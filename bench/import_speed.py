"""Time rung's top rung on the light models: import, print, re-parse (medians).

    python bench/import_speed.py [--repeat 5] [--model densenet121]

Each stage is timed separately in one process, after one warm-up run, and the
median of the repeats is reported, since the machines are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import onnx

from rung.dialects import parse_module, print_module
from rung.importers.onnx import import_model

LIGHT = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "light"


def time_model(path: Path, repeat: int) -> dict[str, float]:
    stages: dict[str, list[float]] = {"import": [], "print": [], "parse": []}
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        module = import_model(path)
        t1 = time.perf_counter()
        text = print_module(module)
        t2 = time.perf_counter()
        parse_module(text)
        t3 = time.perf_counter()
        if i:  # the first run warms caches
            stages["import"].append(t1 - t0)
            stages["print"].append(t2 - t1)
            stages["parse"].append(t3 - t2)
    return {k: statistics.median(v) for k, v in stages.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--model", help="only this light model, e.g. densenet121")
    args = parser.parse_args()
    paths = sorted(LIGHT.glob("light_*.onnx"))
    if args.model:
        paths = [p for p in paths if args.model in p.stem]
    print("| model | nodes | import s | print s | parse s | total s |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in paths:
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        t = time_model(path, args.repeat)
        total = sum(t.values())
        print(
            f"| {path.stem[6:]} | {nodes} | {t['import']:.2f} | {t['print']:.2f} | "
            f"{t['parse']:.2f} | {total:.2f} |"
        )


if __name__ == "__main__":
    main()
