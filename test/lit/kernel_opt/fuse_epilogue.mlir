// kernel-fuse-epilogue moves an elementwise consumer into the nest that fills
// the buffer it reads (here a window sum per point, as a depthwise conv or a
// pool computes), right after that nest's store: the bias and the activation
// run on the value just computed, and the intermediate buffer goes away. The
// consumer's output buffer and the views it reads move above the producer.
// RUN: opt %s -p kernel-fuse-epilogue | filecheck %s

// CHECK-LABEL: func.func @window_then_bias_relu
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %y = kernel.alloc() : memref<4x6xf32>
// CHECK-NEXT:    %bv = kernel.view %bias() : memref<4xf32> -> memref<4x1xf32>
// CHECK-NEXT:    kernel.loop (%[[C:.*]], %[[X:.*]]) in (4, 6) [parallel, parallel] {
// CHECK-NEXT:      %[[S:.*]] = kernel.loop (%{{.*}}) in (3) [reduction] iter_args
// CHECK:           }
// CHECK-NEXT:      %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:      %[[B:.*]] = kernel.load %bv[%[[C]], %{{.*}}] : memref<4x1xf32>
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[A]], %{{.*}} : f32
// CHECK-NEXT:      kernel.store %[[R]], %y[%[[C]], %[[X]]] : memref<4x6xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : memref<4x6xf32>
func.func @window_then_bias_relu(%x: memref<4x8xf32>, %bias: memref<4xf32>) -> memref<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %t = kernel.alloc() : memref<4x6xf32>
  kernel.loop (%c, %o) in (4, 6) [parallel, parallel] {
    %s = kernel.loop (%k) in (3) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %i = arith.addi %o, %k : index
      %v = kernel.load %x[%c, %i] : memref<4x8xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %t[%c, %o] : memref<4x6xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<4x6xf32>
  %bv = kernel.view %bias() : memref<4xf32> -> memref<4x1xf32>
  kernel.loop (%a, %b) in (4, 6) [parallel, parallel] {
    %v = kernel.load %t[%a, %b] : memref<4x6xf32>
    %z = arith.constant 0 : index
    %w = kernel.load %bv[%a, %z] : memref<4x1xf32>
    %s = arith.addf %v, %w : f32
    %r = arith.maximumf %s, %zero : f32
    kernel.store %r, %y[%a, %b] : memref<4x6xf32>
    kernel.yield
  }
  func.return %y : memref<4x6xf32>
}

// The consumer's input is written between the nests: it must read the new value,
// so it stays where it is.
// CHECK-LABEL: func.func @input_written_between
// CHECK:         %t = kernel.alloc()
// CHECK:         kernel.store %{{.*}}, %b[%{{.*}}]
// CHECK:         kernel.load %t[
func.func @input_written_between(%x: memref<8xf32>, %b: memref<8xf32>) -> memref<8xf32> {
  %zero = arith.constant 0.0 : f32
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %s = kernel.loop (%k) in (2) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i] : memref<8xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %t[%i] : memref<8xf32>
    kernel.yield
  }
  kernel.loop (%i) in (8) [parallel] {
    kernel.store %zero, %b[%i] : memref<8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %v = kernel.load %t[%i] : memref<8xf32>
    %w = kernel.load %b[%i] : memref<8xf32>
    %s = arith.addf %v, %w : f32
    kernel.store %s, %y[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %y : memref<8xf32>
}

// The consumer reads the buffer at other indices (a shift) or it has a second
// reader (the function returns it): no fusion.
// CHECK-LABEL: func.func @shifted_read
// CHECK:         kernel.store %{{.*}}, %t[
// CHECK:         kernel.load %t[
func.func @shifted_read(%x: memref<8xf32>) -> memref<7xf32> {
  %zero = arith.constant 0.0 : f32
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %s = kernel.loop (%k) in (2) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i] : memref<8xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<7xf32>
  kernel.loop (%i) in (7) [parallel] {
    %one = arith.constant 1 : index
    %j = arith.addi %i, %one : index
    %v = kernel.load %t[%j] : memref<8xf32>
    kernel.store %v, %y[%i] : memref<7xf32>
    kernel.yield
  }
  func.return %y : memref<7xf32>
}

// CHECK-LABEL: func.func @buffer_returned
// CHECK:         kernel.store %{{.*}}, %t[
// CHECK:         kernel.load %t[
func.func @buffer_returned(%x: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %s = kernel.loop (%k) in (2) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i] : memref<8xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %v = kernel.load %t[%i] : memref<8xf32>
    %n = arith.negf %v : f32
    kernel.store %n, %y[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %t, %y : memref<8xf32>, memref<8xf32>
}
