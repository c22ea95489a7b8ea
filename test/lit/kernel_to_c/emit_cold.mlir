// Cold parts: a run of top-level ops whose work (loop trips times the ops of the
// body) is below `cold-work`, of at least `cold-lines` lines, is a part of its own
// marked RUNG_COLD (compiled for size); a large op is never in one, and a run of
// small ops shorter than `cold-lines` stays in the part around it. An allocation
// goes with the op after it.
// RUN: opt %s -t 'c{outline-above-lines=1 part-lines=100 cold-work=1000 cold-lines=12}' | filecheck %s
// RUN: opt %s -t 'c{outline-above-lines=1 part-lines=100 cold-work=1000 cold-lines=100}' | filecheck %s --check-prefix=SHORT

// CHECK:       {{^}}static int model_part1(
// CHECK:         for (int64_t i = 0; i < 64; i++) {
// CHECK:       {{^}}RUNG_COLD static int model_part2({{.*}}, float **const c_out) {
// CHECK-NOT:   < 64;
// CHECK:         for (int64_t [[I:i[0-9]+]] = 0; [[I]] < 4; [[I]]++) {
// CHECK-NOT:   < 64;
// CHECK:         for (int64_t [[K:i[0-9]+]] = 0; [[K]] < 4; [[K]]++) {
// CHECK:       {{^}}static int model_part3({{.*}}, float **const d_out) {
// CHECK-NEXT:    rung_heap heap = *heap_io;
// CHECK-NEXT:    int rc = 0;
// CHECK-NEXT:    float *const d = (float *)rung_heap_alloc(&heap, (size_t)(64 * 16) * sizeof(float));
// CHECK:         for (int64_t [[L:i[0-9]+]] = 0; [[L]] < 64; [[L]]++) {

// SHORT-NOT:   RUNG_COLD
// SHORT:       static int model_part1(
// SHORT-NOT:   RUNG_COLD

func.func @f(%x: memref<64x16xf32>, %y: memref<4xf32>) -> (memref<64x16xf32>, memref<4xf32>) {
  %a = kernel.alloc() : memref<64x16xf32>
  kernel.loop (%i, %j) in (64, 16) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<64x16xf32>
    %w = arith.addf %v, %v : f32
    kernel.store %w, %a[%i, %j] : memref<64x16xf32>
    kernel.yield
  }
  %b = kernel.alloc() : memref<4xf32>
  kernel.loop (%i) in (4) [parallel] {
    %v = kernel.load %y[%i] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    kernel.store %w, %b[%i] : memref<4xf32>
    kernel.yield
  }
  %c = kernel.alloc() : memref<4xf32>
  kernel.loop (%i) in (4) [parallel] {
    %v = kernel.load %b[%i] : memref<4xf32>
    %w = arith.mulf %v, %v : f32
    kernel.store %w, %c[%i] : memref<4xf32>
    kernel.yield
  }
  %d = kernel.alloc() : memref<64x16xf32>
  kernel.loop (%i, %j) in (64, 16) [parallel, parallel] {
    %v = kernel.load %a[%i, %j] : memref<64x16xf32>
    %w = arith.mulf %v, %v : f32
    kernel.store %w, %d[%i, %j] : memref<64x16xf32>
    kernel.yield
  }
  func.return %d, %c : memref<64x16xf32>, memref<4xf32>
}
