// Every kernel op prints in its custom syntax and reads back to the same text.
// RUN: opt %s | filecheck %s
// RUN: opt %s | opt | filecheck %s

// CHECK:      %n = kernel.dim %x[0] : memref<?x64xf32>
// CHECK-NEXT: %y = kernel.alloc(%n) : memref<?x64xf32>
// CHECK:      kernel.loop (%i, %j) in (%n, 64) [parallel, parallel] {
// CHECK-NEXT:   %a = kernel.load %x[%i, %j] : memref<?x64xf32>
// CHECK-NEXT:   %r = arith.maximumf %a, %zero : f32
// CHECK-NEXT:   kernel.store %r, %y[%i, %j] : memref<?x64xf32>
// CHECK-NEXT:   kernel.yield
// CHECK-NEXT: }
// CHECK:      %s = kernel.loop (%k) in (64) step (2) [reduction] iter_args(%acc = %zero : f32) -> f32 attributes {omp} {
// CHECK:        kernel.yield %t : f32
// CHECK:      %v = kernel.view %y(%n) : memref<?x64xf32> -> memref<?x8x8xf32>
// CHECK-NEXT: %w = kernel.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: kernel.call @external(%y, %y) [1, 0] : memref<?x64xf32>, memref<?x64xf32>
// CHECK-NEXT: kernel.copy %y, %y : memref<?x64xf32>, memref<?x64xf32>
// CHECK:      %f = kernel.remf %r2, %r2 : f32
// CHECK-NEXT: %o = kernel.alloc() {offset = 128 : i64} : memref<4xf32>
// CHECK:      kernel.matmul %m, %m, %m {accumulate} : memref<1x2x2xf32>, memref<1x2x2xf32>, memref<1x2x2xf32>
// CHECK:      kernel.matmul %m, %m, %m epilogue ["mul:row" %b2, "max:scalar" %s0] : memref<1x2x2xf32>, memref<1x2x2xf32>, memref<1x2x2xf32>, memref<2xf32>, memref<f32>
// CHECK:      kernel.call @conv_shift_float(%ci, %cw, %co) [1, 1, 1, 1, 1, 1, 1] epilogue ["add:row" %b2, "rmin:full" %cf] {tag} : memref<1x3x4x4xf32>, memref<2x3x3x3xf32>, memref<1x2x4x4xf32>, memref<2xf32>, memref<1x2x16xf32>
// CHECK:      kernel.matmul %m, %m, %m epilogue ["add:row" %b2] {accumulate, activation = "silu", tag} : memref<1x2x2xf32>, memref<1x2x2xf32>, memref<1x2x2xf32>, memref<2xf32>
// CHECK:      kernel.call @depthwise_float(%ci, %dww, %dwo) [1, 1, 1, 1, 1, 1] {activation = "silu"} : memref<1x3x4x4xf32>, memref<3x1x3x3xf32>, memref<1x3x4x4xf32>
// CHECK-NEXT: kernel.dealloc %y : memref<?x64xf32>

func.func @f(%x: memref<?x64xf32>) -> memref<?x64xf32> {
  %n = kernel.dim %x[0] : memref<?x64xf32>
  %y = kernel.alloc(%n) : memref<?x64xf32>
  %zero = arith.constant 0.0 : f32
  kernel.loop (%i, %j) in (%n, 64) [parallel, parallel] {
    %a = kernel.load %x[%i, %j] : memref<?x64xf32>
    %r = arith.maximumf %a, %zero : f32
    kernel.store %r, %y[%i, %j] : memref<?x64xf32>
    kernel.yield
  }
  %c0 = arith.constant 0 : index
  %s = kernel.loop (%k) in (64) step (2) [reduction] iter_args(%acc = %zero : f32) -> f32 attributes {omp} {
    %a = kernel.load %x[%c0, %k] : memref<?x64xf32>
    %t = arith.addf %acc, %a : f32
    kernel.yield %t : f32
  }
  %v = kernel.view %y(%n) : memref<?x64xf32> -> memref<?x8x8xf32>
  %w = kernel.constant dense<1.0> : tensor<4xf32>
  kernel.call @external(%y, %y) [1, 0] : memref<?x64xf32>, memref<?x64xf32>
  kernel.copy %y, %y : memref<?x64xf32>, memref<?x64xf32>
  %r2 = arith.constant 1.5 : f32
  %f = kernel.remf %r2, %r2 : f32
  %o = kernel.alloc() {offset = 128 : i64} : memref<4xf32>
  %m = kernel.alloc() : memref<1x2x2xf32>
  kernel.matmul %m, %m, %m {accumulate} : memref<1x2x2xf32>, memref<1x2x2xf32>, memref<1x2x2xf32>
  %b2 = kernel.alloc() : memref<2xf32>
  %s0 = kernel.alloc() : memref<f32>
  kernel.matmul %m, %m, %m epilogue ["mul:row" %b2, "max:scalar" %s0] : memref<1x2x2xf32>, memref<1x2x2xf32>, memref<1x2x2xf32>, memref<2xf32>, memref<f32>
  %ci = kernel.alloc() : memref<1x3x4x4xf32>
  %cw = kernel.alloc() : memref<2x3x3x3xf32>
  %co = kernel.alloc() : memref<1x2x4x4xf32>
  %cf = kernel.alloc() : memref<1x2x16xf32>
  kernel.call @conv_shift_float(%ci, %cw, %co) [1, 1, 1, 1, 1, 1, 1] epilogue ["add:row" %b2, "rmin:full" %cf] {tag} : memref<1x3x4x4xf32>, memref<2x3x3x3xf32>, memref<1x2x4x4xf32>, memref<2xf32>, memref<1x2x16xf32>
  kernel.matmul %m, %m, %m epilogue ["add:row" %b2] {tag, activation = "silu", accumulate} : memref<1x2x2xf32>, memref<1x2x2xf32>, memref<1x2x2xf32>, memref<2xf32>
  %dww = kernel.alloc() : memref<3x1x3x3xf32>
  %dwo = kernel.alloc() : memref<1x3x4x4xf32>
  kernel.call @depthwise_float(%ci, %dww, %dwo) [1, 1, 1, 1, 1, 1] {activation = "silu"} : memref<1x3x4x4xf32>, memref<3x1x3x3xf32>, memref<1x3x4x4xf32>
  kernel.dealloc %y : memref<?x64xf32>
  return %y : memref<?x64xf32>
}
