// core.sort is a call of the runtime's stable merge sort, with a scratch
// buffer of keys (f64, n) and one of positions (i64, 2n) for n the size of
// the axis; args are [axis, descending]. core.nonzero counts the non-zero
// elements, allocates its [rank, count] result with the count as a run-time
// size, then fills it in row-major order under an scf.if.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @sort_rows(%x: memref<3x?xf32>) -> (memref<3x?xf32>, memref<3x?xi64>)
// CHECK:         %[[N:.*]] = kernel.dim %x[1] : memref<3x?xf32>
// CHECK-NEXT:    %v = kernel.alloc(%[[N]]) : memref<3x?xf32>
// CHECK-NEXT:    %i = kernel.alloc(%[[N]]) : memref<3x?xi64>
// CHECK-NEXT:    %[[K:.*]] = kernel.alloc(%[[N]]) : memref<?xf64>
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[N2:.*]] = arith.muli %[[TWO]], %[[N]] : index
// CHECK-NEXT:    %[[P:.*]] = kernel.alloc(%[[N2]]) : memref<?xi64>
// CHECK-NEXT:    kernel.call @sort(%x, %v, %i, %[[K]], %[[P]]) [1, 0] : memref<3x?xf32>, memref<3x?xf32>, memref<3x?xi64>, memref<?xf64>, memref<?xi64>
// CHECK-NEXT:    func.return %v, %i
func.func @sort_rows(%x: tensor<3x?xf32>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  %v, %i = core.sort(%x) {axis = 1 : i64, descending = 0 : i64} : (tensor<3x?xf32>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  func.return %v, %i : tensor<3x?xf32>, tensor<3x?xi64>
}

// CHECK-LABEL: func.func @sort_columns_descending(%x: memref<4x3xi32>)
// CHECK:         %[[K:.*]] = kernel.alloc() : memref<4xf64>
// CHECK-NEXT:    %[[P:.*]] = kernel.alloc() : memref<8xi64>
// CHECK-NEXT:    kernel.call @sort(%x, %v, %i, %[[K]], %[[P]]) [0, 1]
func.func @sort_columns_descending(%x: tensor<4x3xi32>) -> (tensor<4x3xi32>, tensor<4x3xi64>) {
  %v, %i = core.sort(%x) {axis = 0 : i64, descending = 1 : i64} : (tensor<4x3xi32>) -> (tensor<4x3xi32>, tensor<4x3xi64>)
  func.return %v, %i : tensor<4x3xi32>, tensor<4x3xi64>
}

// CHECK-LABEL: func.func @nonzero(%x: memref<3x4xf32>) -> memref<2x?xi64>
// CHECK:         %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[COUNT:.*]] = kernel.loop (%[[A:.*]], %[[B:.*]]) in (3, 4) [reduction, reduction] iter_args(%[[C:.*]] = %[[Z]] : index) -> index {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[A]], %[[B]]] : memref<3x4xf32>
// CHECK-NEXT:      %[[ZF:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[NZ:.*]] = arith.cmpf une, %[[V]], %[[ZF]] : f32
// CHECK:           %[[ADD:.*]] = arith.select %[[NZ]]
// CHECK-NEXT:      %[[C2:.*]] = arith.addi %[[C]], %[[ADD]] : index
// CHECK-NEXT:      kernel.yield %[[C2]] : index
// CHECK-NEXT:    }
// CHECK-NEXT:    %n = kernel.alloc(%[[COUNT]]) : memref<2x?xi64>
// CHECK:         kernel.loop (%[[I:.*]], %[[J:.*]]) in (3, 4) [reduction, reduction] iter_args(%[[POS:.*]] = %{{.*}} : index) -> index {
// CHECK:           %[[HIT:.*]] = arith.cmpf une
// CHECK-NEXT:      scf.if %[[HIT]] {
// CHECK-NEXT:        %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:        %[[R0:.*]] = arith.constant 0 : index
// CHECK-NEXT:        kernel.store %[[I64]], %n[%[[R0]], %[[POS]]] : memref<2x?xi64>
// CHECK-NEXT:        %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:        %[[R1:.*]] = arith.constant 1 : index
// CHECK-NEXT:        kernel.store %[[J64]], %n[%[[R1]], %[[POS]]] : memref<2x?xi64>
// CHECK-NEXT:      }
// CHECK:           arith.addi %[[POS]]
// CHECK:         func.return %n : memref<2x?xi64>
func.func @nonzero(%x: tensor<3x4xf32>) -> tensor<2x?xi64> {
  %n = core.nonzero(%x) : (tensor<3x4xf32>) -> tensor<2x?xi64>
  func.return %n : tensor<2x?xi64>
}

// Booleans compare with 0 as integers.
// CHECK-LABEL: func.func @nonzero_bool(%x: memref<5xi1>) -> memref<1x?xi64>
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : i1
func.func @nonzero_bool(%x: tensor<5xi1>) -> tensor<1x?xi64> {
  %n = core.nonzero(%x) : (tensor<5xi1>) -> tensor<1x?xi64>
  func.return %n : tensor<1x?xi64>
}
