// kernel-fuse-elementwise: a cheap producer goes into every consumer (loads
// of one element in one block share one copy of the body); run-time sizes
// match when they are the same value, also through `kernel.dim` of the
// buffer, which is folded to the size; the buffer's dealloc goes too.
// RUN: opt %s -p kernel-fuse-elementwise | filecheck %s

// CHECK-LABEL: func.func @cheap_into_two
// CHECK-NOT:     %t = kernel.alloc
// CHECK:         kernel.loop (%i) in (8) [parallel] {
// CHECK-NEXT:      %[[A:.*]] = kernel.load %x[%i] : memref<8xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[A]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[S]], %[[S]] : f32
// CHECK-NEXT:      kernel.store %[[M]], %u[%i] : memref<8xf32>
// CHECK:         kernel.loop (%i{{.*}}) in (8) [parallel] {
// CHECK-NEXT:      %[[A2:.*]] = kernel.load %x[%i{{.*}}] : memref<8xf32>
// CHECK-NEXT:      %[[S2:.*]] = arith.addf %[[A2]], %[[A2]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[S2]] : f32
// CHECK-NEXT:      kernel.store %[[N]], %v[%i{{.*}}] : memref<8xf32>
// CHECK-NOT:     kernel.dealloc
func.func @cheap_into_two(%x: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %x[%i] : memref<8xf32>
    %s = arith.addf %a, %a : f32
    kernel.store %s, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %u = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %t[%i] : memref<8xf32>
    %b = kernel.load %t[%i] : memref<8xf32>
    %m = arith.mulf %a, %b : f32
    kernel.store %m, %u[%i] : memref<8xf32>
    kernel.yield
  }
  %v = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %t[%i] : memref<8xf32>
    %n = arith.negf %a : f32
    kernel.store %n, %v[%i] : memref<8xf32>
    kernel.yield
  }
  kernel.dealloc %t : memref<8xf32>
  func.return %u, %v : memref<8xf32>, memref<8xf32>
}

// A cheap body (a broadcast: one load) also goes into a consumer that runs
// more often than the buffer has elements.
// CHECK-LABEL: func.func @cheap_into_larger_domain
// CHECK:         kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
// CHECK-NEXT:      %[[B:.*]] = kernel.load %b[%j] : memref<8xf32>
// CHECK-NEXT:      kernel.store %[[B]], %y[%i, %j] : memref<4x8xf32>
func.func @cheap_into_larger_domain(%b: memref<8xf32>) -> memref<4x8xf32> {
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%j) in (8) [parallel] {
    %a = kernel.load %b[%j] : memref<8xf32>
    kernel.store %a, %t[%j] : memref<8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %a = kernel.load %t[%j] : memref<8xf32>
    kernel.store %a, %y[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  func.return %y : memref<4x8xf32>
}

// Run-time sizes: the loops' bounds are `kernel.dim`s of the buffers, which
// become the allocation's size operand.
// CHECK-LABEL: func.func @dynamic
// CHECK:         %n = kernel.dim %x[0] : memref<?x16xf32>
// CHECK-NEXT:    %y = kernel.alloc(%n) : memref<?x16xf32>
// CHECK-NEXT:    kernel.loop (%i, %j) in (%n, 16) [parallel, parallel] {
// CHECK-NEXT:      %[[A:.*]] = kernel.load %x[%i, %j] : memref<?x16xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[L:.*]] = math.log %[[E]] : f32
// CHECK-NEXT:      kernel.store %[[L]], %y[%i, %j] : memref<?x16xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : memref<?x16xf32>
func.func @dynamic(%x: memref<?x16xf32>) -> memref<?x16xf32> {
  %n = kernel.dim %x[0] : memref<?x16xf32>
  %t = kernel.alloc(%n) : memref<?x16xf32>
  %tn = kernel.dim %t[0] : memref<?x16xf32>
  kernel.loop (%i, %j) in (%tn, 16) [parallel, parallel] {
    %a = kernel.load %x[%i, %j] : memref<?x16xf32>
    %e = math.exp %a : f32
    kernel.store %e, %t[%i, %j] : memref<?x16xf32>
    kernel.yield
  }
  %y = kernel.alloc(%n) : memref<?x16xf32>
  %yn = kernel.dim %y[0] : memref<?x16xf32>
  kernel.loop (%i, %j) in (%yn, 16) [parallel, parallel] {
    %a = kernel.load %t[%i, %j] : memref<?x16xf32>
    %l = math.log %a : f32
    kernel.store %l, %y[%i, %j] : memref<?x16xf32>
    kernel.yield
  }
  func.return %y : memref<?x16xf32>
}

// Different run-time sizes do not match: an expensive body is not inlined
// into loops whose size is not known to be the buffer's.
// CHECK-LABEL: func.func @dynamic_mismatch
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
func.func @dynamic_mismatch(%x: memref<?xf32>, %m: index) -> memref<?x?xf32> {
  %n = kernel.dim %x[0] : memref<?xf32>
  %t = kernel.alloc(%n) : memref<?xf32>
  kernel.loop (%i) in (%n) [parallel] {
    %a = kernel.load %x[%i] : memref<?xf32>
    %e = math.exp %a : f32
    kernel.store %e, %t[%i] : memref<?xf32>
    kernel.yield
  }
  %y = kernel.alloc(%m, %n) : memref<?x?xf32>
  kernel.loop (%i, %j) in (%m, %n) [parallel, parallel] {
    %a = kernel.load %t[%j] : memref<?xf32>
    kernel.store %a, %y[%i, %j] : memref<?x?xf32>
    kernel.yield
  }
  func.return %y : memref<?x?xf32>
}
