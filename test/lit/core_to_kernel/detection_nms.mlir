// core.non_max_suppression is a call of the runtime's rung_nms. The call
// writes the kept rows into a buffer sized for the most there can be
// (batches × classes × min(boxes, max(max_output, 0)), max_output read at run
// time unless it is a constant) and their number into a one-element buffer;
// the result is then allocated with that count and the rows copied into it.
// Scratch: each box's corners and area (f32, boxes × 5) and the heap of
// candidates (i64, boxes). The args are [center_point_box,
// has_score_threshold]; without a threshold the iou buffer fills its place.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @run_time(%boxes: memref<?x?x4xf32>, %scores: memref<?x?x?xf32>, %max: memref<i64>, %iou: memref<f32>, %thr: memref<f32>) -> memref<?x3xi64>
// CHECK-NEXT:    %[[B:.*]] = kernel.dim %scores[0] : memref<?x?x?xf32>
// CHECK-NEXT:    %[[C:.*]] = kernel.dim %scores[1] : memref<?x?x?xf32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %scores[2] : memref<?x?x?xf32>
// CHECK-NEXT:    %[[MAX:.*]] = kernel.load %max[] : memref<i64>
// CHECK-NEXT:    %[[MAXI:.*]] = arith.index_cast %[[MAX]] : i64 to index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[POS:.*]] = arith.maxsi %[[MAXI]], %[[ZERO]] : index
// CHECK-NEXT:    %[[LIMIT:.*]] = arith.minsi %[[POS]], %[[N]] : index
// CHECK-NEXT:    %[[BC:.*]] = arith.muli %[[B]], %[[C]] : index
// CHECK-NEXT:    %[[CAP:.*]] = arith.muli %[[BC]], %[[LIMIT]] : index
// CHECK-NEXT:    %[[ROWS:.*]] = kernel.alloc(%[[CAP]]) : memref<?x3xi64>
// CHECK-NEXT:    %[[COUNT:.*]] = kernel.alloc() : memref<1xi64>
// CHECK-NEXT:    %[[CORNERS:.*]] = kernel.alloc(%[[N]]) : memref<?x5xf32>
// CHECK-NEXT:    %[[HEAP:.*]] = kernel.alloc(%[[N]]) : memref<?xi64>
// CHECK-NEXT:    kernel.call @nms(%boxes, %scores, %max, %iou, %thr, %[[ROWS]], %[[COUNT]], %[[CORNERS]], %[[HEAP]]) [1, 1] : memref<?x?x4xf32>, memref<?x?x?xf32>, memref<i64>, memref<f32>, memref<f32>, memref<?x3xi64>, memref<1xi64>, memref<?x5xf32>, memref<?xi64>
// CHECK-NEXT:    %[[AT:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[KEPT:.*]] = kernel.load %[[COUNT]][%[[AT]]] : memref<1xi64>
// CHECK-NEXT:    %[[K:.*]] = arith.index_cast %[[KEPT]] : i64 to index
// CHECK-NEXT:    %sel = kernel.alloc(%[[K]]) : memref<?x3xi64>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (%[[K]], 3) [parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %[[ROWS]][%[[I]], %[[J]]] : memref<?x3xi64>
// CHECK-NEXT:      kernel.store %[[V]], %sel[%[[I]], %[[J]]] : memref<?x3xi64>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %sel : memref<?x3xi64>
func.func @run_time(%boxes: tensor<?x?x4xf32>, %scores: tensor<?x?x?xf32>, %max: tensor<i64>, %iou: tensor<f32>, %thr: tensor<f32>) -> tensor<?x3xi64> {
  %sel = core.non_max_suppression(%boxes, %scores, %max, %iou, %thr) {center_point_box = 1 : i64} : (tensor<?x?x4xf32>, tensor<?x?x?xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

// A constant max_output over static dims sizes the rows statically: 2 × 3 × min(6, 4).
// CHECK-LABEL: func.func @constant_limit(
// CHECK:         %[[ROWS:.*]] = kernel.alloc() : memref<24x3xi64>
// CHECK-NEXT:    %[[COUNT:.*]] = kernel.alloc() : memref<1xi64>
// CHECK-NEXT:    %[[CORNERS:.*]] = kernel.alloc() : memref<6x5xf32>
// CHECK-NEXT:    %[[HEAP:.*]] = kernel.alloc() : memref<6xi64>
// CHECK-NEXT:    kernel.call @nms(%boxes, %scores, %max, %iou, %iou, %[[ROWS]], %[[COUNT]], %[[CORNERS]], %[[HEAP]]) [0, 0]
func.func @constant_limit(%boxes: tensor<2x6x4xf32>, %scores: tensor<2x3x6xf32>) -> tensor<?x3xi64> {
  %max = core.constant() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %iou = core.constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %sel = core.non_max_suppression(%boxes, %scores, %max, %iou) {center_point_box = 0 : i64} : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<i64>, tensor<f32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

// torchvision exports max_output as the largest int64: the rows are bounded by the boxes.
// CHECK-LABEL: func.func @largest_limit(
// CHECK:         %[[N:.*]] = kernel.dim %scores[2] : memref<1x1x?xf32>
// CHECK-NEXT:    %[[MAX:.*]] = arith.constant 9223372036854775807 : index
// CHECK-NEXT:    %[[LIMIT:.*]] = arith.minsi %[[MAX]], %[[N]] : index
// CHECK-NEXT:    %{{.*}} = kernel.alloc(%[[LIMIT]]) : memref<?x3xi64>
func.func @largest_limit(%boxes: tensor<1x?x4xf32>, %scores: tensor<1x1x?xf32>) -> tensor<?x3xi64> {
  %max = core.constant() {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %iou = core.constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %sel = core.non_max_suppression(%boxes, %scores, %max, %iou) {center_point_box = 0 : i64} : (tensor<1x?x4xf32>, tensor<1x1x?xf32>, tensor<i64>, tensor<f32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}
