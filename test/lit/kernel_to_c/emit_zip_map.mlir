// kernel.zip_map is rung_zip_map on the keys and values as rung_tensor
// descriptors: a list of maps sharing one copy of each on the run's heap. The
// output is a sequence of maps, packed with its keys' strings into one block,
// and the header says so.
// RUN: opt %s -t c | filecheck %s

// CHECK:      static const char *const labels[2] = {
// CHECK-NEXT:   "cat", "dog",
// CHECK:      rung_sequence *const probs = rung_zip_map(&heap, &(rung_tensor){(void *)labels, 8, 1, {2}}, &(rung_tensor){(void *)scores, 1, 2, {scores_d0, 2}});
// CHECK-NEXT: if (!probs) RUNG_FAIL("out of memory");
// CHECK-NEXT: if (rung_pack_value(&(rung_tensor){(void *)probs, RUNG_DTYPE_SEQUENCE, 0, {0}}, &outputs[0])) RUNG_FAIL("out of memory");
func.func @zip(%scores: memref<?x2xf32>) -> !kernel.list<!onnx.map<!onnx.string, f32>> {
  %labels = kernel.constant #onnx.strings<["cat", "dog"] : tensor<2x!onnx.string>>
  %probs = kernel.zip_map %labels, %scores : memref<2x!onnx.string>, memref<?x2xf32> -> !kernel.list<!onnx.map<!onnx.string, f32>>
  func.return %probs : !kernel.list<!onnx.map<!onnx.string, f32>>
}
