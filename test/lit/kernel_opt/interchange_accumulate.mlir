// kernel-interchange on a parallel nest around a reduction loop with one
// iter_arg stored at the nest's ivs: when an outer dim walks the reduction's
// reads with unit stride and the reduction dim does not (a matmul, a sum
// over a leading axis), the result buffer is filled with the initial value
// and the sum accumulates in it, in a nest whose dims are then reordered.
// RUN: opt %s -p kernel-interchange | filecheck %s

// CHECK-LABEL: func.func @matmul
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}) in (64, 48) [parallel, parallel] {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      kernel.store %[[ZERO]], %c[%[[I0:.*]], %[[J0:.*]]] : memref<64x48xi32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.loop (%i, %k, %j) in (64, 32, 48) [parallel, reduction, parallel] {
// CHECK-NEXT:      %[[ACC:.*]] = kernel.load %c[%i, %j] : memref<64x48xi32>
// CHECK-NEXT:      %x = kernel.load %a[%i, %k] : memref<64x32xi32>
// CHECK-NEXT:      %y = kernel.load %b[%k, %j] : memref<32x48xi32>
// CHECK-NEXT:      %p = arith.muli %x, %y : i32
// CHECK-NEXT:      %s = arith.addi %[[ACC]], %p : i32
// CHECK-NEXT:      kernel.store %s, %c[%i, %j] : memref<64x48xi32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
func.func @matmul(%a: memref<64x32xi32>, %b: memref<32x48xi32>, %c: memref<64x48xi32>) {
  kernel.loop (%i, %j) in (64, 48) [parallel, parallel] {
    %zero = arith.constant 0 : i32
    %r = kernel.loop (%k) in (32) [reduction] iter_args(%acc = %zero : i32) -> i32 {
      %x = kernel.load %a[%i, %k] : memref<64x32xi32>
      %y = kernel.load %b[%k, %j] : memref<32x48xi32>
      %p = arith.muli %x, %y : i32
      %s = arith.addi %acc, %p : i32
      kernel.yield %s : i32
    }
    kernel.store %r, %c[%i, %j] : memref<64x48xi32>
    kernel.yield
  }
  func.return
}

// A sum over the leading axis: (j, k) becomes (k, j).
// CHECK-LABEL: func.func @sum_leading_axis
// CHECK:         kernel.store %{{.*}}, %y[%{{.*}}] : memref<96xf32>
// CHECK:         kernel.loop (%k, %j) in (%n, 96) [reduction, parallel] {
func.func @sum_leading_axis(%x: memref<?x96xf32>, %y: memref<96xf32>, %n: index) {
  %zero = arith.constant 0.000000e+00 : f32
  kernel.loop (%j) in (96) [parallel] {
    %r = kernel.loop (%k) in (%n) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%k, %j] : memref<?x96xf32>
      %s = arith.addf %acc, %v : f32
      kernel.yield %s : f32
    }
    kernel.store %r, %y[%j] : memref<96xf32>
    kernel.yield
  }
  func.return
}

// A sum over the last axis already reads with unit stride: unchanged.
// CHECK-LABEL: func.func @sum_last_axis
// CHECK:         kernel.loop (%i) in (64) [parallel] {
// CHECK-NEXT:      kernel.loop (%k) in (96) [reduction] iter_args
func.func @sum_last_axis(%x: memref<64x96xf32>, %y: memref<64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  kernel.loop (%i) in (64) [parallel] {
    %r = kernel.loop (%k) in (96) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i, %k] : memref<64x96xf32>
      %s = arith.addf %acc, %v : f32
      kernel.yield %s : f32
    }
    kernel.store %r, %y[%i] : memref<64xf32>
    kernel.yield
  }
  func.return
}

// A mean over the leading axis: the division moves to a third nest reading
// the sums back.
// CHECK-LABEL: func.func @mean_leading_axis
// CHECK:         kernel.store %zero, %y[%{{.*}}] : memref<96xf32>
// CHECK:         kernel.loop (%k, %j) in (32, 96) [reduction, parallel] {
// CHECK:           kernel.store %s, %y[%j] : memref<96xf32>
// CHECK:         kernel.loop (%[[J:.*]]) in (96) [parallel] {
// CHECK-NEXT:      %[[SUM:.*]] = kernel.load %y[%[[J]]] : memref<96xf32>
// CHECK-NEXT:      %m = arith.divf %[[SUM]], %n : f32
// CHECK-NEXT:      kernel.store %m, %y[%[[J]]] : memref<96xf32>
func.func @mean_leading_axis(%x: memref<32x96xf32>, %y: memref<96xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %n = arith.constant 3.200000e+01 : f32
  kernel.loop (%j) in (96) [parallel] {
    %r = kernel.loop (%k) in (32) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%k, %j] : memref<32x96xf32>
      %s = arith.addf %acc, %v : f32
      kernel.yield %s : f32
    }
    %m = arith.divf %r, %n : f32
    kernel.store %m, %y[%j] : memref<96xf32>
    kernel.yield
  }
  func.return
}

// Not the shape, or not worth it: the reduction stores (a running sum), it
// reads the result buffer, or the outer dim is too short to vectorize.
// CHECK-LABEL: func.func @stays
// CHECK-COUNT-3: kernel.loop (%k{{.*}}) in (32) [reduction] iter_args
func.func @stays(%x: memref<32x96xf32>, %y: memref<96xf32>, %z: memref<96xf64>) {
  %zero = arith.constant 0.000000e+00 : f32
  kernel.loop (%j) in (96) [parallel] {
    %r = kernel.loop (%k) in (32) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%k, %j] : memref<32x96xf32>
      %s = arith.addf %acc, %v : f32
      %w = arith.extf %s : f32 to f64
      kernel.store %w, %z[%j] : memref<96xf64>
      kernel.yield %s : f32
    }
    kernel.store %r, %y[%j] : memref<96xf32>
    kernel.yield
  }
  kernel.loop (%j) in (96) [parallel] {
    %r = kernel.loop (%k) in (32) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%k, %j] : memref<32x96xf32>
      %c0 = arith.constant 0 : index
      %u = kernel.load %y[%c0] : memref<96xf32>
      %s = arith.addf %acc, %v : f32
      %t = arith.addf %s, %u : f32
      kernel.yield %t : f32
    }
    kernel.store %r, %y[%j] : memref<96xf32>
    kernel.yield
  }
  kernel.loop (%j) in (4) [parallel] {
    %r = kernel.loop (%k) in (32) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%k, %j] : memref<32x96xf32>
      %s = arith.addf %acc, %v : f32
      kernel.yield %s : f32
    }
    kernel.store %r, %y[%j] : memref<96xf32>
    kernel.yield
  }
  func.return
}
