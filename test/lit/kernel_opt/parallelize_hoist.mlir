// kernel-parallelize: a top-level nest whose outermost dims are reductions but
// that has a parallel dim further in, and the work for threads, gets that dim
// moved outermost (parallel dims may go anywhere; the reductions keep their
// order) and then `omp`. A max pool written per window offset, (kh, kw, c)
// after interchange, shares its channels among the threads.
// RUN: opt %s -p kernel-parallelize | filecheck %s

// CHECK-LABEL: func.func @pool_per_offset
// CHECK:         kernel.loop (%[[C:.*]], %[[KH:.*]], %[[KW:.*]]) in (64, 2, 2) [parallel, reduction, reduction] attributes {omp} {
// CHECK-NEXT:      kernel.loop (%[[H:.*]], %[[W:.*]]) in (32, 32) [parallel, parallel] {
// CHECK:             kernel.load %x[%[[C]], {{.*}}] : memref<64x64x64xf32>
func.func @pool_per_offset(%x: memref<64x64x64xf32>, %y: memref<64x32x32xf32>) {
  %c2 = arith.constant 2 : index
  kernel.loop (%kh, %kw, %c) in (2, 2, 64) [reduction, reduction, parallel] {
    kernel.loop (%h, %w) in (32, 32) [parallel, parallel] {
      %h2 = arith.muli %h, %c2 : index
      %w2 = arith.muli %w, %c2 : index
      %sh = arith.addi %h2, %kh : index
      %sw = arith.addi %w2, %kw : index
      %v = kernel.load %x[%c, %sh, %sw] : memref<64x64x64xf32>
      %old = kernel.load %y[%c, %h, %w] : memref<64x32x32xf32>
      %m = arith.maximumf %old, %v : f32
      kernel.store %m, %y[%c, %h, %w] : memref<64x32x32xf32>
      kernel.yield
    }
    kernel.yield
  }
  func.return
}

// Too little work for threads: the nest keeps its order and runs serially.
// CHECK-LABEL: func.func @small_pool
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 2, 4) [reduction, reduction, parallel] {
func.func @small_pool(%x: memref<4x8x8xf32>, %y: memref<4x4x4xf32>) {
  %c2 = arith.constant 2 : index
  kernel.loop (%kh, %kw, %c) in (2, 2, 4) [reduction, reduction, parallel] {
    kernel.loop (%h, %w) in (4, 4) [parallel, parallel] {
      %h2 = arith.muli %h, %c2 : index
      %w2 = arith.muli %w, %c2 : index
      %sh = arith.addi %h2, %kh : index
      %sw = arith.addi %w2, %kw : index
      %v = kernel.load %x[%c, %sh, %sw] : memref<4x8x8xf32>
      %old = kernel.load %y[%c, %h, %w] : memref<4x4x4xf32>
      %m = arith.maximumf %old, %v : f32
      kernel.store %m, %y[%c, %h, %w] : memref<4x4x4xf32>
      kernel.yield
    }
    kernel.yield
  }
  func.return
}

// The parallel dim is the innermost one of a nest with no inner nest, the one
// the C compiler vectorizes (column sums): it stays, and the nest is serial.
// CHECK-LABEL: func.func @column_sums
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}) in (512, 512) [reduction, parallel] {
func.func @column_sums(%x: memref<512x512xf32>, %y: memref<512xf32>) {
  kernel.loop (%r, %p) in (512, 512) [reduction, parallel] {
    %v = kernel.load %x[%r, %p] : memref<512x512xf32>
    %old = kernel.load %y[%p] : memref<512xf32>
    %s = arith.addf %old, %v : f32
    kernel.store %s, %y[%p] : memref<512xf32>
    kernel.yield
  }
  func.return
}
