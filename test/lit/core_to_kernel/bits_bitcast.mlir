// core.bitcast is a parallel nest of arith.bitcast (the bits kept); a bool is
// the byte 0 or 1, so to a byte it widens and from one it is `!= 0`.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @bits(
// CHECK:         %[[N:.*]] = kernel.dim %x[0] : memref<?x3xf32>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?x3xi32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (%[[N]], 3) [parallel, parallel] {
// CHECK-NEXT:      %[[A:.*]] = kernel.load %x[%[[I]], %[[J]]] : memref<?x3xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.bitcast %[[A]] : f32 to i32
// CHECK-NEXT:      kernel.store %[[R]], %y[%[[I]], %[[J]]] : memref<?x3xi32>
// CHECK:         %c = kernel.alloc() : memref<4xui8>
// CHECK:           arith.extui %{{.*}} : i1 to ui8
// CHECK:         %d = kernel.alloc() : memref<4xi1>
// CHECK:           arith.cmpi ne, %{{.*}}, %{{.*}} : ui8
// CHECK:         %e = kernel.alloc() : memref<2xi16>
// CHECK:           arith.bitcast %{{.*}} : bf16 to i16
func.func @bits(%x: tensor<?x3xf32>, %b: tensor<4xi1>, %u: tensor<4xui8>, %h: tensor<2xbf16>) -> (tensor<?x3xi32>, tensor<4xui8>, tensor<4xi1>, tensor<2xi16>) {
  %y = core.bitcast(%x) : (tensor<?x3xf32>) -> tensor<?x3xi32>
  %c = core.bitcast(%b) : (tensor<4xi1>) -> tensor<4xui8>
  %d = core.bitcast(%u) : (tensor<4xui8>) -> tensor<4xi1>
  %e = core.bitcast(%h) : (tensor<2xbf16>) -> tensor<2xi16>
  func.return %y, %c, %d, %e : tensor<?x3xi32>, tensor<4xui8>, tensor<4xi1>, tensor<2xi16>
}
