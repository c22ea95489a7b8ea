// kernel-fuse-elementwise through reshapes: a view that splits dims of the
// producer's buffer (a bias add seen as heads before a transpose) maps the
// consumer's indices back with multiplies and adds; a view that merges dims
// (which would need divisions) keeps the producer.
// RUN: opt %s -p kernel-fuse-elementwise | filecheck %s

// CHECK-LABEL: func.func @split_heads
// CHECK-NOT:     kernel.view
// CHECK:         kernel.loop (%h, %s, %d) in (4, 8, 16) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[M:.*]] = arith.muli %h, %[[C16]] : index
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[M]], %d : index
// CHECK-NEXT:      %[[X:.*]] = kernel.load %x[%s, %[[J]]] : memref<8x64xf32>
// CHECK-NEXT:      %[[B:.*]] = kernel.load %b[%[[J]]] : memref<64xf32>
// CHECK-NEXT:      %[[V:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:      kernel.store %[[V]], %y[%h, %s, %d] : memref<4x8x16xf32>
// CHECK-NOT:     kernel.alloc() : memref<8x64xf32>
func.func @split_heads(%x: memref<8x64xf32>, %b: memref<64xf32>) -> memref<4x8x16xf32> {
  %t = kernel.alloc() : memref<8x64xf32>
  kernel.loop (%i, %j) in (8, 64) [parallel, parallel] {
    %u = kernel.load %x[%i, %j] : memref<8x64xf32>
    %v = kernel.load %b[%j] : memref<64xf32>
    %s = arith.addf %u, %v : f32
    kernel.store %s, %t[%i, %j] : memref<8x64xf32>
    kernel.yield
  }
  %heads = kernel.view %t() : memref<8x64xf32> -> memref<1x8x4x16xf32>
  %y = kernel.alloc() : memref<4x8x16xf32>
  kernel.loop (%h, %s, %d) in (4, 8, 16) [parallel, parallel, parallel] {
    %c0 = arith.constant 0 : index
    %v = kernel.load %heads[%c0, %s, %h, %d] : memref<1x8x4x16xf32>
    kernel.store %v, %y[%h, %s, %d] : memref<4x8x16xf32>
    kernel.yield
  }
  func.return %y : memref<4x8x16xf32>
}

// CHECK-LABEL: func.func @merged_dims_stay
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}, %{{.*}}] : memref<8x64xf32>
// CHECK:         kernel.view %t
func.func @merged_dims_stay(%x: memref<8x64xf32>) -> memref<512xf32> {
  %t = kernel.alloc() : memref<8x64xf32>
  kernel.loop (%i, %j) in (8, 64) [parallel, parallel] {
    %u = kernel.load %x[%i, %j] : memref<8x64xf32>
    %s = arith.addf %u, %u : f32
    kernel.store %s, %t[%i, %j] : memref<8x64xf32>
    kernel.yield
  }
  %flat = kernel.view %t() : memref<8x64xf32> -> memref<512xf32>
  %y = kernel.alloc() : memref<512xf32>
  kernel.loop (%k) in (512) [parallel] {
    %v = kernel.load %flat[%k] : memref<512xf32>
    kernel.store %v, %y[%k] : memref<512xf32>
    kernel.yield
  }
  func.return %y : memref<512xf32>
}
