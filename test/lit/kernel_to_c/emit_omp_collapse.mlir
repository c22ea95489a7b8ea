// C generation: an OpenMP nest whose first dim has fewer than 16 iterations
// shares the static parallel dims after it too (`collapse`), so three input
// channels do not leave one of two threads a third idle; a nest with enough
// iterations, or a run-time first bound, shares its first dim alone.
// RUN: opt %s -t c | filecheck %s

// CHECK:        #pragma omp parallel for collapse(3) schedule(static)
// CHECK-NEXT:   for (int64_t c = 0; c < 3; c++) {
// CHECK-NEXT:     for (int64_t kh = 0; kh < 3; kh++) {
// CHECK-NEXT:       for (int64_t kw = 0; kw < 3; kw++) {
// CHECK:        #pragma omp parallel for collapse(2) schedule(static)
// CHECK-NEXT:   for (int64_t a = 0; a < 8; a++) {
// CHECK-NEXT:     for (int64_t b = 0; b < 64; b++) {
// CHECK-NEXT:       for (int64_t d = 0; d < 64; d++) {
// CHECK:        #pragma omp parallel for schedule(static)
// CHECK-NEXT:   for (int64_t r = 0; r < 64; r++) {
// CHECK:        #pragma omp parallel for schedule(static)
// CHECK-NEXT:   for (int64_t q = 0; q < w_d0; q++) {
func.func @shares(%x: memref<3x3x3x4096xf32>, %y: memref<8x64x64xf32>, %z: memref<64x64xf32>, %w: memref<?x8xf32>) {
  %one = arith.constant 1.0 : f32
  kernel.loop (%c, %kh, %kw, %p) in (3, 3, 3, 4096) [parallel, parallel, parallel, parallel] attributes {omp} {
    kernel.store %one, %x[%c, %kh, %kw, %p] : memref<3x3x3x4096xf32>
    kernel.yield
  }
  kernel.loop (%a, %b, %d) in (8, 64, 64) [parallel, parallel, parallel] attributes {omp} {
    kernel.store %one, %y[%a, %b, %d] : memref<8x64x64xf32>
    kernel.yield
  }
  kernel.loop (%r, %s) in (64, 64) [parallel, parallel] attributes {omp} {
    kernel.store %one, %z[%r, %s] : memref<64x64xf32>
    kernel.yield
  }
  %n = kernel.dim %w[0] : memref<?x8xf32>
  kernel.loop (%q, %t) in (%n, 8) [parallel, parallel] attributes {omp} {
    kernel.store %one, %w[%q, %t] : memref<?x8xf32>
    kernel.yield
  }
  func.return
}
