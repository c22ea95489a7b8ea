// core.if becomes scf.if on the loaded condition, with memref results. Each
// branch is lowered in its region and yields buffers; a branch whose buffer is
// more static than the result is cast with a free kernel.view.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @branches_of_different_shapes(%c: memref<i1>, %a: memref<3xf32>, %b: memref<4xf32>) -> memref<?xf32>
// CHECK:         %[[C:.*]] = kernel.load %c[] : memref<i1>
// CHECK-NEXT:    %r = scf.if %[[C]] -> (memref<?xf32>) {
// CHECK-NEXT:      %x = kernel.alloc() : memref<3xf32>
// CHECK-NEXT:      kernel.loop
// CHECK:             arith.addf
// CHECK:           %[[N3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[V3:.*]] = kernel.view %x(%[[N3]]) : memref<3xf32> -> memref<?xf32>
// CHECK-NEXT:      scf.yield %[[V3]] : memref<?xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[N4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[V4:.*]] = kernel.view %b(%[[N4]]) : memref<4xf32> -> memref<?xf32>
// CHECK-NEXT:      scf.yield %[[V4]] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : memref<?xf32>
func.func @branches_of_different_shapes(%c: tensor<i1>, %a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
  %r = core.if(%c) : (tensor<i1>) -> tensor<?xf32> then {
    %x = core.binary add(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    core.yield(%x) : (tensor<3xf32>) -> ()
  } else {
    core.yield(%b) : (tensor<4xf32>) -> ()
  }
  func.return %r : tensor<?xf32>
}

// Buffers of the result's type are yielded as they are; a run-time dim used
// inside a branch is read there, and read again after the if (the first
// kernel.dim is out of scope there).
// CHECK-LABEL: func.func @same_type_and_dims
// CHECK:         %r = scf.if %{{.*}} -> (memref<?xf32>) {
// CHECK-NEXT:      %[[N:.*]] = kernel.dim %a[0] : memref<?xf32>
// CHECK-NEXT:      %n = kernel.alloc(%[[N]]) : memref<?xf32>
// CHECK:           scf.yield %n : memref<?xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %a : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M:.*]] = kernel.dim %a[0] : memref<?xf32>
// CHECK-NEXT:    %s = kernel.alloc(%[[M]]) : memref<?xf32>
func.func @same_type_and_dims(%c: tensor<i1>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %r = core.if(%c) : (tensor<i1>) -> tensor<?xf32> then {
    %n = core.unary neg(%a) : (tensor<?xf32>) -> tensor<?xf32>
    core.yield(%n) : (tensor<?xf32>) -> ()
  } else {
    core.yield(%a) : (tensor<?xf32>) -> ()
  }
  %s = core.unary neg(%a) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %r, %s : tensor<?xf32>, tensor<?xf32>
}
