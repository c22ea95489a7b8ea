// kernel-parallelize: a top-level nest whose outermost dim is parallel gets
// `omp` when it does at least 65536 scalar ops (or a run-time number of
// them); small nests, reductions, iter_args, nests inside other nests and
// bodies with calls stay serial. Dims that run once are dropped first.
// RUN: opt %s -p kernel-parallelize | filecheck %s

// 256 x 256 x (load, add, store) = 196608 ops: parallel.
// CHECK-LABEL: func.func @large
// CHECK:         kernel.loop (%i, %j) in (256, 256) [parallel, parallel] attributes {omp} {
func.func @large(%x: memref<256x256xf32>, %y: memref<256x256xf32>) {
  kernel.loop (%i, %j) in (256, 256) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<256x256xf32>
    %w = arith.addf %v, %v : f32
    kernel.store %w, %y[%i, %j] : memref<256x256xf32>
    kernel.yield
  }
  func.return
}

// 64 x 64 x 3 = 12288 ops: not worth waking threads.
// CHECK-LABEL: func.func @small
// CHECK:         kernel.loop (%i, %j) in (64, 64) [parallel, parallel] {
func.func @small(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
  kernel.loop (%i, %j) in (64, 64) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<64x64xf32>
    %w = arith.addf %v, %v : f32
    kernel.store %w, %y[%i, %j] : memref<64x64xf32>
    kernel.yield
  }
  func.return
}

// The work of an inner reduction loop counts: 64 rows x 1024 x 3 ops.
// CHECK-LABEL: func.func @rows_with_inner_reduction
// CHECK:         kernel.loop (%i) in (64) [parallel] attributes {omp} {
// CHECK:           kernel.loop (%k) in (1024) [reduction] iter_args
// CHECK-NOT:       omp
func.func @rows_with_inner_reduction(%x: memref<64x1024xf32>, %y: memref<64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  kernel.loop (%i) in (64) [parallel] {
    %s = kernel.loop (%k) in (1024) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i, %k] : memref<64x1024xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %y[%i] : memref<64xf32>
    kernel.yield
  }
  func.return
}

// A batch dim of 1 is dropped, so the channel dim is shared out; a run-time
// bound counts as large.
// CHECK-LABEL: func.func @unit_batch_and_dynamic
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    kernel.loop (%c, %p) in (64, 3136) [parallel, parallel] attributes {omp} {
// CHECK-NEXT:      kernel.load %x[%[[ZERO]], %c, %p]
// CHECK:         kernel.loop (%i) in (%n) [parallel] attributes {omp} {
func.func @unit_batch_and_dynamic(%x: memref<1x64x3136xf32>, %y: memref<1x64x3136xf32>, %z: memref<?xf32>, %n: index) {
  kernel.loop (%b, %c, %p) in (1, 64, 3136) [parallel, parallel, parallel] {
    %v = kernel.load %x[%b, %c, %p] : memref<1x64x3136xf32>
    kernel.store %v, %y[%b, %c, %p] : memref<1x64x3136xf32>
    kernel.yield
  }
  kernel.loop (%i) in (%n) [parallel] {
    %v = kernel.load %z[%i] : memref<?xf32>
    %w = arith.mulf %v, %v : f32
    kernel.store %w, %z[%i] : memref<?xf32>
    kernel.yield
  }
  func.return
}

// Serial: a reduction outermost (a scatter), iter_args, a call in the body,
// and nests inside another nest (only the outer one may get threads).
// CHECK-LABEL: func.func @serial
// CHECK:         kernel.loop (%i, %j) in (256, 256) [reduction, parallel] {
// CHECK:         kernel.loop (%i{{.*}}, %j{{.*}}) in (256, 256) [reduction, reduction] iter_args
// CHECK:         kernel.loop (%i{{.*}}) in (256) [parallel] {
// CHECK:           kernel.call @external
// CHECK:         kernel.loop (%i{{.*}}) in (256) [parallel] attributes {omp} {
// CHECK-NEXT:      kernel.loop (%j{{.*}}) in (256) [parallel] {
func.func @serial(%x: memref<256x256xf32>, %idx: memref<256x256xi64>, %y: memref<256x256xf32>) -> f32 {
  kernel.loop (%i, %j) in (256, 256) [reduction, parallel] {
    %v = kernel.load %x[%i, %j] : memref<256x256xf32>
    %k = kernel.load %idx[%i, %j] : memref<256x256xi64>
    %r = arith.index_cast %k : i64 to index
    kernel.store %v, %y[%r, %j] : memref<256x256xf32>
    kernel.yield
  }
  %zero = arith.constant 0.000000e+00 : f32
  %s = kernel.loop (%i, %j) in (256, 256) [reduction, reduction] iter_args(%acc = %zero : f32) -> f32 {
    %v = kernel.load %x[%i, %j] : memref<256x256xf32>
    %n = arith.addf %acc, %v : f32
    kernel.yield %n : f32
  }
  kernel.loop (%i) in (256) [parallel] {
    kernel.call @external(%y) [1] : memref<256x256xf32>
    kernel.yield
  }
  kernel.loop (%i) in (256) [parallel] {
    kernel.loop (%j) in (256) [parallel] {
      %v = kernel.load %x[%i, %j] : memref<256x256xf32>
      kernel.store %v, %y[%i, %j] : memref<256x256xf32>
      kernel.yield
    }
    kernel.yield
  }
  func.return %s : f32
}

// Dropping dims that run once keeps iter_args, and at least one dim.
// CHECK-LABEL: func.func @unit_dims
// CHECK:         %[[S:.*]] = kernel.loop (%k) in (64) [reduction] iter_args(%acc = %zero : f32) -> f32 {
// CHECK:         kernel.loop (%q) in (1) [parallel] {
// CHECK-NEXT:      kernel.load %x[%{{.*}}, %q]
func.func @unit_dims(%x: memref<1x64xf32>, %y: memref<1x1xf32>) -> f32 {
  %zero = arith.constant 0.000000e+00 : f32
  %s = kernel.loop (%b, %k) in (1, 64) [reduction, reduction] iter_args(%acc = %zero : f32) -> f32 {
    %v = kernel.load %x[%b, %k] : memref<1x64xf32>
    %n = arith.addf %acc, %v : f32
    kernel.yield %n : f32
  }
  kernel.loop (%p, %q) in (1, 1) [parallel, parallel] {
    %v = kernel.load %x[%p, %q] : memref<1x64xf32>
    kernel.store %v, %y[%p, %q] : memref<1x1xf32>
    kernel.yield
  }
  func.return %s : f32
}

// A nest in the body of a control-flow loop runs once per trip of that loop:
// it stays serial too.
// CHECK-LABEL: func.func @in_while
// CHECK:         scf.while
// CHECK:           kernel.loop (%i, %j) in (256, 256) [parallel, parallel] {
func.func @in_while(%x: memref<256x256xf32>, %y: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.while (%a = %c0) : (index) -> index {
    %more = arith.cmpi slt, %a, %c3 : index
    scf.condition(%more) %a : index
  } do {
  ^bb0(%b: index):
    kernel.loop (%i, %j) in (256, 256) [parallel, parallel] {
      %v = kernel.load %x[%i, %j] : memref<256x256xf32>
      %w = arith.addf %v, %v : f32
      kernel.store %w, %y[%i, %j] : memref<256x256xf32>
      kernel.yield
    }
    %n = arith.addi %b, %c1 : index
    scf.yield %n : index
  }
  func.return
}
