"""A plain onnxruntime script: the median time of a model's run at 1 and 2 threads.

    python examples/ort_script.py examples/tiny_cnn.onnx [BATCH]

It runs unchanged on rung: replace the import below by `import rung.runtime as ort`.
Nothing else in it knows about rung.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

DTYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(bool)": np.bool_,
}


def make_feed(sess: ort.InferenceSession, batch: int) -> dict[str, np.ndarray]:
    """Random inputs: every dimension the model leaves open gets `batch`."""
    rng = np.random.default_rng(0)
    feed = {}
    for arg in sess.get_inputs():
        shape = [d if isinstance(d, int) else batch for d in arg.shape]
        feed[arg.name] = rng.standard_normal(shape).astype(DTYPES[arg.type])
    return feed


def median_ms(path: str, threads: int, batch: int, repeat: int = 20) -> float:
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
    feed = make_feed(sess, batch)
    sess.run(None, feed)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000.0


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} MODEL.onnx [BATCH]")
    path = sys.argv[1]
    batch = int(sys.argv[2]) if len(sys.argv) == 3 else 32
    for threads in (1, 2):
        ms = median_ms(path, threads, batch)
        print(f"intra_op_num_threads={threads}: median {ms:.3f} ms (batch {batch})")


if __name__ == "__main__":
    main()
