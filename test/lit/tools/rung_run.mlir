// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))"
// RUN: rung run %s --input x=%t.x.npy | filecheck %s
// RUN: rung run %s --input x=%t.x.npy --level onnx | filecheck %s
// RUN: rung run %s --input x=%t.x.npy --level core | filecheck %s
// RUN: rung run %s --random-inputs --dim N=3 | filecheck %s --check-prefix=RANDOM
// RUN: rm -f %t.npz
// RUN: rung run %s --input x=%t.x.npy -o %t.npz | filecheck %s --check-prefix=SAVED
// RUN: %python -c "import numpy as np; d = np.load('%t.npz'); print(sorted(d), d['y'].tolist())" | filecheck %s --check-prefix=NPZ

// `rung run` runs onnx-dialect IR at a level (by default kernel: compiled C;
// onnx and core are interpreted, with the same answers) and prints each output's
// name, type, shape, dtype and (truncated) values, or saves them. Inputs come
// from .npy files, or are generated from the declared types, with symbolic
// dims set by --dim (other unknown dims are 1).

func.func @main(%x: tensor<?x2xf32> {onnx.name = "x", onnx.dim_params = ["N", ""]}) -> (tensor<?x2xf32> {onnx.name = "y"}, tensor<2xi64> {onnx.name = "shape"}) {
  %c = onnx.Constant() {value = dense<[-1.5, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = onnx.Add(%x, %c) : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %s = onnx.Shape(%x) : (tensor<?x2xf32>) -> tensor<2xi64>
  func.return %y, %s : tensor<?x2xf32>, tensor<2xi64>
}

// CHECK:      y: tensor(float) shape (2, 2) dtype float32
// CHECK-NEXT:   array({{\[\[}}-0.5,  4. ],
// CHECK-NEXT:          [ 1.5,  6. ]], dtype=float32)
// CHECK-NEXT: shape: tensor(int64) shape (2,) dtype int64
// CHECK-NEXT:   array([2, 2])

// RANDOM:      y: tensor(float) shape (3, 2) dtype float32
// RANDOM:      shape: tensor(int64) shape (2,) dtype int64
// RANDOM-NEXT:   array([3, 2])

// SAVED: wrote 2 output(s) to {{.*}}.npz
// NPZ: ['shape', 'y'] {{\[\[}}-0.5, 4.0], [1.5, 6.0]]
