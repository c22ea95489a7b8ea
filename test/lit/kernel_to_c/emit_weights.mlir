// Constants up to 4 KiB are C arrays; larger ones live in the weights side file,
// reached through a pointer that model_init sets from the mapped file.
// RUN: opt %s -t c | filecheck %s

// CHECK:      static const float small[4] = {
// CHECK-NEXT:   1.0f, 2.0f, 3.0f, 4.0f,
// CHECK:      static const float *big;  /* weights file @ 0 */
// CHECK:      int model_init(const char *weights_path) {
// CHECK:        if (rung_map_weights(weights_path, 8192, &rung_weights_base, &rung_weights_size))
// CHECK:        big = (const float *)(rung_weights_base + 0);
func.func @weights() -> (memref<4xf32>, memref<2048xf32>) {
  %small = kernel.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %big = kernel.constant dense<0.5> : tensor<2048xf32>
  func.return %small, %big : memref<4xf32>, memref<2048xf32>
}
