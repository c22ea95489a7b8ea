// core.arg_reduce: a parallel nest over the kept dims around a reduction loop
// carrying (best value, its index). Ties keep the first index (strict compare)
// or take the last (non-strict); for floats a NaN wins like numpy's argmax:
// the first NaN (ugt and an ordered best), or the last (uno or oge).
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @argmax_first(%x: memref<3x4xf32>) -> memref<3xi64>
// CHECK:         kernel.loop (%[[I:.*]]) in (3) [parallel] {
// CHECK-NEXT:      %[[LOW:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}}, %[[W:.*]] = kernel.loop (%[[K:.*]]) in (4) [reduction] iter_args(%[[B:.*]] = %[[LOW]] : f32, %[[P:.*]] = %[[Z]] : index) -> f32, index {
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%[[I]], %[[K]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[ORD:.*]] = arith.cmpf ord, %[[B]], %[[B]] : f32
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ugt, %[[V]], %[[B]] : f32
// CHECK-NEXT:        %[[UP:.*]] = arith.andi %[[ORD]], %[[GT]] : i1
// CHECK-NEXT:        %[[NB:.*]] = arith.select %[[UP]], %[[V]], %[[B]] : f32
// CHECK-NEXT:        %[[NP:.*]] = arith.select %[[UP]], %[[K]], %[[P]] : index
// CHECK-NEXT:        kernel.yield %[[NB]], %[[NP]] : f32, index
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[R:.*]] = arith.index_cast %[[W]] : index to i64
// CHECK-NEXT:      kernel.store %[[R]], %y[%[[I]]] : memref<3xi64>
func.func @argmax_first(%x: tensor<3x4xf32>) -> tensor<3xi64> {
  %y = core.arg_reduce max(%x) {axis = 1 : i64, last = 0 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// CHECK-LABEL: func.func @argmax_last_axis0(%x: memref<3x4xf32>) -> memref<4xi64>
// CHECK:         kernel.loop (%[[J:.*]]) in (4) [parallel] {
// CHECK:           kernel.loop (%[[K:.*]]) in (3) [reduction]
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%[[K]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-NEXT:        %[[GE:.*]] = arith.cmpf oge, %[[V]], %{{.*}} : f32
// CHECK-NEXT:        arith.ori %[[NAN]], %[[GE]] : i1
func.func @argmax_last_axis0(%x: tensor<3x4xf32>) -> tensor<4xi64> {
  %y = core.arg_reduce max(%x) {axis = 0 : i64, last = 1 : i64} : (tensor<3x4xf32>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// Integers: min starts from the largest value; `last` compares with sle.
// CHECK-LABEL: func.func @argmin_last_int(%x: memref<3x4xi32>) -> memref<3xi64>
// CHECK:           arith.constant 2147483647 : i32
// CHECK:           kernel.loop
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x
// CHECK-NEXT:        %[[LE:.*]] = arith.cmpi sle, %[[V]], %{{.*}} : i32
// CHECK-NEXT:        arith.select %[[LE]]
func.func @argmin_last_int(%x: tensor<3x4xi32>) -> tensor<3xi64> {
  %y = core.arg_reduce min(%x) {axis = 1 : i64, last = 1 : i64} : (tensor<3x4xi32>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// Unsigned: arith constants are signless, so the largest ui8 is -1 : i8 bitcast.
// CHECK-LABEL: func.func @argmin_first_uint(%x: memref<5xui8>) -> memref<i64>
// CHECK:         %[[RAW:.*]] = arith.constant -1 : i8
// CHECK-NEXT:    %[[MAX:.*]] = arith.bitcast %[[RAW]] : i8 to ui8
// CHECK:         kernel.loop {{.*}} iter_args(%{{.*}} = %[[MAX]] : ui8
// CHECK:           arith.cmpi ult
func.func @argmin_first_uint(%x: tensor<5xui8>) -> tensor<i64> {
  %y = core.arg_reduce min(%x) {axis = 0 : i64, last = 0 : i64} : (tensor<5xui8>) -> tensor<i64>
  func.return %y : tensor<i64>
}
