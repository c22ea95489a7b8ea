// kernel-interchange: the dim that walks most accesses with unit stride goes
// innermost; reduction dims keep their relative order; nests where no dim
// does better than the innermost one, nests with iter_args and nests with
// ops the pass does not know stay as they are.
// RUN: opt %s -p kernel-interchange | filecheck %s

// A matmul accumulating in memory: (i, j, k) becomes (i, k, j).
// CHECK-LABEL: func.func @matmul_in_memory
// CHECK:         kernel.loop (%i, %k, %j) in (64, 32, 48) [parallel, reduction, parallel] {
// CHECK-NEXT:      kernel.load %a[%i, %k]
// CHECK-NEXT:      kernel.load %b[%k, %j]
// CHECK-NEXT:      kernel.load %c[%i, %j]
func.func @matmul_in_memory(%a: memref<64x32xi32>, %b: memref<32x48xi32>, %c: memref<64x48xi32>) {
  kernel.loop (%i, %j, %k) in (64, 48, 32) [parallel, parallel, reduction] {
    %x = kernel.load %a[%i, %k] : memref<64x32xi32>
    %y = kernel.load %b[%k, %j] : memref<32x48xi32>
    %z = kernel.load %c[%i, %j] : memref<64x48xi32>
    %p = arith.muli %x, %y : i32
    %s = arith.addi %z, %p : i32
    kernel.store %s, %c[%i, %j] : memref<64x48xi32>
    kernel.yield
  }
  func.return
}

// A copy of buffers whose dims are in another order than the nest's, with a
// run-time bound: the nest follows the buffers' order.
// CHECK-LABEL: func.func @follow_the_buffers
// CHECK:         kernel.loop (%i, %k, %j) in (8, %n, 16) [parallel, parallel, parallel] {
func.func @follow_the_buffers(%x: memref<8x?x16xf32>, %y: memref<8x?x16xf32>, %n: index) {
  kernel.loop (%i, %j, %k) in (8, 16, %n) [parallel, parallel, parallel] {
    %v = kernel.load %x[%i, %k, %j] : memref<8x?x16xf32>
    kernel.store %v, %y[%i, %k, %j] : memref<8x?x16xf32>
    kernel.yield
  }
  func.return
}

// Two reduction dims (a sum over rows and columns into memory): the parallel
// dim moves innermost, and %r still runs outside %s, although the buffer's
// layout would put %s outside.
// CHECK-LABEL: func.func @reductions_keep_their_order
// CHECK:         kernel.loop (%r, %s, %j) in (4, 5, 64) [reduction, reduction, parallel] {
func.func @reductions_keep_their_order(%x: memref<5x4x64xf32>, %y: memref<64xf32>) {
  kernel.loop (%j, %r, %s) in (64, 4, 5) [parallel, reduction, reduction] {
    %v = kernel.load %x[%s, %r, %j] : memref<5x4x64xf32>
    %a = kernel.load %y[%j] : memref<64xf32>
    %t = arith.addf %a, %v : f32
    kernel.store %t, %y[%j] : memref<64xf32>
    kernel.yield
  }
  func.return
}

// The same with parallel dims: they follow the layout.
// CHECK-LABEL: func.func @parallel_dims_follow_layout
// CHECK:         kernel.loop (%s, %r, %j) in (5, 4, 64) [parallel, parallel, parallel] {
func.func @parallel_dims_follow_layout(%x: memref<5x4x64xf32>, %y: memref<5x4x64xf32>) {
  kernel.loop (%j, %r, %s) in (64, 4, 5) [parallel, parallel, parallel] {
    %v = kernel.load %x[%s, %r, %j] : memref<5x4x64xf32>
    kernel.store %v, %y[%s, %r, %j] : memref<5x4x64xf32>
    kernel.yield
  }
  func.return
}

// A transpose: as many accesses prefer one dim as the other: unchanged.
// CHECK-LABEL: func.func @transpose_is_a_tie
// CHECK:         kernel.loop (%i, %j) in (8, 16) [parallel, parallel] {
func.func @transpose_is_a_tie(%x: memref<16x8xf32>, %y: memref<8x16xf32>) {
  kernel.loop (%i, %j) in (8, 16) [parallel, parallel] {
    %v = kernel.load %x[%j, %i] : memref<16x8xf32>
    kernel.store %v, %y[%i, %j] : memref<8x16xf32>
    kernel.yield
  }
  func.return
}

// iter_args carry a value through every iteration in order: unchanged.
// CHECK-LABEL: func.func @iter_args_stay
// CHECK:         kernel.loop (%i, %j) in (8, 16) [reduction, reduction] iter_args
func.func @iter_args_stay(%x: memref<16x8xf32>) -> f32 {
  %zero = arith.constant 0.000000e+00 : f32
  %s = kernel.loop (%i, %j) in (8, 16) [reduction, reduction] iter_args(%acc = %zero : f32) -> f32 {
    %v = kernel.load %x[%j, %i] : memref<16x8xf32>
    %n = arith.addf %acc, %v : f32
    kernel.yield %n : f32
  }
  func.return %s : f32
}

// A body with a call: unchanged.
// CHECK-LABEL: func.func @unknown_body_stays
// CHECK:         kernel.loop (%i, %j) in (8, 16) [parallel, parallel] {
func.func @unknown_body_stays(%x: memref<16x8xf32>, %y: memref<8x16xf32>) {
  kernel.loop (%i, %j) in (8, 16) [parallel, parallel] {
    %v = kernel.load %x[%j, %i] : memref<16x8xf32>
    kernel.store %v, %x[%j, %i] : memref<16x8xf32>
    kernel.call @external(%y) [0] : memref<8x16xf32>
    kernel.yield
  }
  func.return
}
