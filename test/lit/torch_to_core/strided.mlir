// as_strided over its input's elements in row-major order: the identity (a
// channels-last "view" of a reduction's output) is a reshape; any other view
// is one gather of the flattened input at positions fixed at compile time.
// RUN: opt %s -p convert-torch-to-core | filecheck %s

// CHECK-LABEL: func.func @identity(
// CHECK-NEXT:    func.return %x
func.func @identity(%x: tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32> {
  %y = torch.aten.as_strided(%x) {size = [1, 8, 1, 1], stride = [8, 1, 8, 8]} : (tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  func.return %y : tensor<1x8x1x1xf32>
}

// CHECK-LABEL: func.func @transposing(
// CHECK:         %[[POS:.*]] = core.constant() {value = dense<[1, 3, 2, 4]> : tensor<4xi64>}
// CHECK:         core.gather(%{{.*}}, %[[POS]]) {axis = 0 : i64}
// CHECK:         core.reshape
// CHECK-NOT:     torch.
func.func @transposing(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %y = torch.aten.as_strided(%x) {size = [2, 2], stride = [1, 2], storage_offset = 1} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}
