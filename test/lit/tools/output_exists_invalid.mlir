// RUN: rm -rf %t && mkdir %t && echo keep > %t/out.mlir && echo keep > %t/out.npz
// RUN: not opt %s -o %t/out.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not rung import %S/Inputs/add_relu.onnxtxt -o %t/out.mlir 2>&1 | filecheck %s --check-prefix=IMPORT
// RUN: not rung run %s --random-inputs -o %t/out.npz 2>&1 | filecheck %s --check-prefix=SAVE
// RUN: filecheck %s --input-file %t/out.mlir --check-prefix=KEPT
// RUN: filecheck %s --input-file %t/out.npz --check-prefix=KEPT
// RUN: opt %s -o %t/out.mlir --force
// RUN: filecheck %s --input-file %t/out.mlir --check-prefix=NEW
// RUN: rung import %S/Inputs/add_relu.onnxtxt -o %t/out.mlir --force
// RUN: filecheck %s --input-file %t/out.mlir --check-prefix=IMPORTED
// RUN: rung run %s --random-inputs -o %t/out.npz --force

// -o never replaces an existing file unless --force is given (as `rung compile`
// asks for its folder), and a refused write leaves the file as it was.

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// OPT: opt: error: '{{.*}}out.mlir' exists; pass --force to overwrite it
// IMPORT: rung: error: '{{.*}}out.mlir' exists; pass --force to overwrite it
// SAVE: rung: error: '{{.*}}out.npz' exists; pass --force to overwrite it
// KEPT: keep
// NEW: func.func @f
// IMPORTED: onnx.Relu
