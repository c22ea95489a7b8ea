// Quantization over `?` dims: the scale's rank decides the layout, and its
// lengths are checked when the model runs (core.check) before a run-time
// broadcast: per axis along `axis` (a length of 1 acts per tensor), blocked as a
// gather of block `i // block_size`. QLinearMatMul's per-row and per-column
// scales broadcast by numpy's rules, at run time along `?` dims.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// CHECK-LABEL: func.func @dequantize_per_axis(
// CHECK:         %[[ZLEN:.*]] = core.shape_of(%z) : (tensor<?xui8>) -> tensor<1xi64>
// CHECK:         %[[DIM:.*]] = core.gather(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[SAME:.*]] = core.compare eq(%[[ZLEN]], %[[DIM]])
// CHECK:         %[[ONE:.*]] = core.compare eq(%[[ZLEN]], %{{.*}})
// CHECK-NEXT:    %[[FITS:.*]] = core.binary or(%[[SAME]], %[[ONE]])
// CHECK-NEXT:    %[[Z:.*]] = core.check(%z, %[[FITS]]) {message = "the per-axis scale or zero point does not fit dim 1"} : (tensor<?xui8>, tensor<1xi1>) -> tensor<?xui8>
// CHECK-NEXT:    %[[SHAPE:.*]] = core.shape_of(%x)
// CHECK-NEXT:    core.broadcast(%[[Z]], %[[SHAPE]]) {dims = array<i64: 1>} : (tensor<?xui8>, tensor<2xi64>) -> tensor<?x?xui8>
// CHECK:         %[[S:.*]] = core.check(%s, %{{.*}}) {message = "the per-axis scale or zero point does not fit dim 1"}
// CHECK:         core.broadcast(%[[S]], %{{.*}}) {dims = array<i64: 1>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NOT:     onnx.
func.func @dequantize_per_axis(%x: tensor<?x?xui8>, %s: tensor<?xf32>, %z: tensor<?xui8>) -> tensor<?x?xf32> {
  %y = onnx.DequantizeLinear(%x, %s, %z) {axis = 1 : i64} : (tensor<?x?xui8>, tensor<?xf32>, tensor<?xui8>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// The scale must be [3, ceil(d / 2)]; entry i of x's dim 1 takes block i // 2.
// CHECK-LABEL: func.func @quantize_blocked(
// CHECK:         %[[BLOCKS:.*]] = core.binary div(%{{.*}}, %{{.*}}) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK:         %[[WANT:.*]] = core.select(%{{.*}}, %[[BLOCKS]], %{{.*}})
// CHECK-NEXT:    %[[FITS:.*]] = core.compare eq(%{{.*}}, %[[WANT]]) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
// CHECK-NEXT:    %[[S:.*]] = core.check(%s, %[[FITS]]) {message = "the blocked scale or zero point does not fit (block_size 2 on axis 1)"}
// CHECK:         %[[IOTA:.*]] = core.iota(%{{.*}}) {dim = 0 : i64} : (tensor<i64>) -> tensor<?xi64>
// CHECK:         %[[IDX:.*]] = core.binary div(%[[IOTA]], %{{.*}}) : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
// CHECK-NEXT:    %[[G:.*]] = core.gather(%[[S]], %[[IDX]]) {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
// CHECK-NEXT:    %[[XS:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[SPREAD:.*]] = core.reshape(%[[G]], %[[XS]]) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<3x?xf32>
// CHECK-NEXT:    core.binary div(%x, %[[SPREAD]]) : (tensor<3x?xf32>, tensor<3x?xf32>) -> tensor<3x?xf32>
// CHECK:         %y = core.cast(%{{.*}}) : (tensor<3x?xf32>) -> tensor<3x?xi8>
func.func @quantize_blocked(%x: tensor<3x?xf32>, %s: tensor<?x?xf32>) -> tensor<3x?xi8> {
  %y = onnx.QuantizeLinear(%x, %s) {axis = 1 : i64, block_size = 2 : i64, output_dtype = 3 : i64} : (tensor<3x?xf32>, tensor<?x?xf32>) -> tensor<3x?xi8>
  func.return %y : tensor<3x?xi8>
}

// A scalar scale makes the zero point per tensor too, whatever its `?` length
// says: it must hold one element.
// CHECK-LABEL: func.func @quantize_per_tensor_dynamic_zero_point(
// CHECK:         %[[N:.*]] = core.reduce prod(%{{.*}}) {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<i64>}
// CHECK-NEXT:    %[[FITS:.*]] = core.compare eq(%[[N]], %[[ONE]])
// CHECK-NEXT:    %[[Z:.*]] = core.check(%z, %[[FITS]]) {message = "a per-tensor scale or zero point must hold one element"}
// CHECK-NEXT:    %[[ZS:.*]] = core.reshape(%[[Z]]) : (tensor<?xui8>) -> tensor<ui8>
// CHECK-NEXT:    %[[XS:.*]] = core.shape_of(%x)
// CHECK-NEXT:    core.broadcast(%[[ZS]], %[[XS]]) {dims = array<i64>} : (tensor<ui8>, tensor<1xi64>) -> tensor<?xui8>
func.func @quantize_per_tensor_dynamic_zero_point(%x: tensor<?xf32>, %s: tensor<f32>, %z: tensor<?xui8>) -> tensor<?xui8> {
  %y = onnx.QuantizeLinear(%x, %s, %z) : (tensor<?xf32>, tensor<f32>, tensor<?xui8>) -> tensor<?xui8>
  func.return %y : tensor<?xui8>
}

// a's scale and zero point per row ([M, 1]): each meets what it applies to in a
// run-time broadcast, checked.
// CHECK-LABEL: func.func @qlinear_per_row(
// CHECK:         %[[SHAPE:.*]] = core.check(%{{.*}}, %{{.*}}) {message = "operand shapes cannot be broadcast together"}
// CHECK-NEXT:    %[[A:.*]] = core.broadcast(%{{.*}}, %[[SHAPE]]) {dims = array<i64: 0, 1>} : (tensor<?x4xi32>, tensor<2xi64>) -> tensor<?x4xi32>
// CHECK-NEXT:    %[[AZ:.*]] = core.broadcast(%{{.*}}, %[[SHAPE]]) {dims = array<i64: 0, 1>} : (tensor<?x1xi32>, tensor<2xi64>) -> tensor<?x4xi32>
// CHECK:         %[[P:.*]] = core.matmul(%{{.*}}, %{{.*}}) {acc = i32} : (tensor<?x4xi32>, tensor<4x3xi32>) -> tensor<?x3xi32>
// CHECK:         %[[R:.*]] = core.binary div(%{{.*}}, %{{.*}}) : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
// CHECK:         core.broadcast(%{{.*}}, %{{.*}}) {dims = array<i64: 0, 1>} : (tensor<?x1xf64>, tensor<2xi64>) -> tensor<?x3xf64>
// CHECK:         %y = core.cast(%{{.*}}) : (tensor<?x3xf64>) -> tensor<?x3xi8>
// CHECK-NOT:     onnx.
func.func @qlinear_per_row(%a: tensor<?x4xi8>, %as: tensor<?x1xf32>, %az: tensor<?x1xi8>, %b: tensor<4x3xi8>, %bs: tensor<f32>, %bz: tensor<i8>, %ys: tensor<f32>, %yz: tensor<i8>) -> tensor<?x3xi8> {
  %y = onnx.QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<?x4xi8>, tensor<?x1xf32>, tensor<?x1xi8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<?x3xi8>
  func.return %y : tensor<?x3xi8>
}
