"""Write a binary .onnx model from a textual one, for tests that need binary input.

    make_onnx.py MODEL.onnxtxt OUT.onnx [--truncate] [--external TENSOR=LOCATION]

--truncate         keep only the first half of the serialized bytes.
--external T=LOC   move initializer T's data to the file LOC, relative to OUT's
                   folder (it may point outside it, e.g. `../secret.bin`); the
                   data file is written there and the model refers to LOC. An
                   absolute LOC is only recorded in the model: nothing is
                   written outside the test's own folders.
"""

import argparse
import os

import onnx
import onnx.parser

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("out")
parser.add_argument("--truncate", action="store_true")
parser.add_argument("--external", action="append", default=[])
args = parser.parse_args()

with open(args.model, encoding="utf-8") as f:
    model = onnx.parser.parse_model(f.read())

folder = os.path.dirname(os.path.abspath(args.out))
for spec in args.external:
    name, location = spec.split("=", 1)
    (tensor,) = [t for t in model.graph.initializer if t.name == name]
    data = onnx.numpy_helper.to_array(tensor).tobytes()
    if not os.path.isabs(location):
        target = os.path.normpath(os.path.join(folder, location))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    for field in ("float_data", "int32_data", "int64_data", "double_data", "raw_data"):
        tensor.ClearField(field)
    tensor.data_location = onnx.TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location

data = model.SerializeToString()
if args.truncate:
    data = data[: len(data) // 2]
with open(args.out, "wb") as f:
    f.write(data)
