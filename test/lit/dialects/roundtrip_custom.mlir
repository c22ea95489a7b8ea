// onnx.Custom keeps its domain, op type, attributes, absent inputs/outputs
// (by position) and named graph regions through a round trip, in both the
// custom and the generic syntax.
// RUN: opt %s | opt | filecheck %s
// RUN: opt %s --print-op-generic | opt | filecheck %s

// CHECK-LABEL: func.func @custom(
// CHECK-NEXT:    %z, %w = onnx.Custom "custom.domain" "Thing"(%a, none, %b) {k = 3 : i64, s = "x"} : (tensor<2xf32>, none, tensor<2xf32>) -> (tensor<2xf32>, none, !onnx.unknown) "body" {
// CHECK-NEXT:      %q = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      onnx.Yield %q : tensor<2xf32>
// CHECK-NEXT:    } "other" {
// CHECK-NEXT:      onnx.Yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %m = onnx.Custom "com.microsoft" "FusedMatMul"(%a, %b) {alpha = 1.000000e+00 : f32, transA = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    onnx.Custom "my.ops" "Print"(%m) : (tensor<2xf32>) -> ()
// CHECK-NEXT:    %k = onnx.Custom "my.ops" "Make"() : () -> !onnx.seq<tensor<?xf32>>
// CHECK-NEXT:    func.return %z : tensor<2xf32>

func.func @custom(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %z, %w = onnx.Custom "custom.domain" "Thing"(%a, none, %b) {k = 3 : i64, s = "x"} : (tensor<2xf32>, none, tensor<2xf32>) -> (tensor<2xf32>, none, !onnx.unknown) "body" {
    %q = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %q : tensor<2xf32>
  } "other" {
    onnx.Yield
  }
  %m = onnx.Custom "com.microsoft" "FusedMatMul"(%a, %b) {alpha = 1.0 : f32, transA = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  onnx.Custom "my.ops" "Print"(%m) : (tensor<2xf32>) -> ()
  %k = onnx.Custom "my.ops" "Make"() : () -> !onnx.seq<tensor<?xf32>>
  func.return %z : tensor<2xf32>
}
