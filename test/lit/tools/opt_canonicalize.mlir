// RUN: opt %s -p canonicalize | filecheck %s

// xDSL's canonicalize runs over rung's input: constants fold, and the ones
// left unused disappear. onnx ops pass through untouched.

func.func @fold(%i: i32, %a: tensor<2xf32>) -> (i32, tensor<2xf32>) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %s = arith.addi %c1, %c2 : i32
  %t = arith.muli %i, %s : i32
  %r = onnx.Relu(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %t, %r : i32, tensor<2xf32>
}

// CHECK-LABEL: func.func @fold
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    %[[T:.*]] = arith.muli %i, %[[C3]] : i32
// CHECK-NEXT:    %[[R:.*]] = onnx.Relu(%a)
// CHECK-NEXT:    func.return %[[T]], %[[R]] : i32, tensor<2xf32>
