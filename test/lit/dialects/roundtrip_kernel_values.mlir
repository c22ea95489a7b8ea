// Lists, optionals, maps and strings of the kernel dialect print and parse back.
// RUN: opt %s | filecheck %s
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @values
// CHECK-NEXT:    %l = kernel.list_new(%a, %b) : (memref<3xf32>, memref<?xf32>) -> !kernel.list<f32>
// CHECK-NEXT:    %e = kernel.list_new() : () -> !kernel.list<f32>
// CHECK-NEXT:    %n = kernel.list_length %l : !kernel.list<f32>
// CHECK-NEXT:    %g = kernel.list_get %l[%i] : !kernel.list<f32> -> memref<?xf32>
// CHECK-NEXT:    %m = kernel.list_insert %l, %a, %n : !kernel.list<f32>, memref<3xf32>
// CHECK-NEXT:    %r = kernel.list_erase %m, %i : !kernel.list<f32>
// CHECK-NEXT:    %o = kernel.optional_new(%a) : !kernel.optional<memref<3xf32>>
// CHECK-NEXT:    %z = kernel.optional_new() : !kernel.optional<memref<3xf32>>
// CHECK-NEXT:    %h = kernel.optional_has %o : !kernel.optional<memref<3xf32>>
// CHECK-NEXT:    %v = kernel.optional_get %o : !kernel.optional<memref<3xf32>>
// CHECK-NEXT:    %c = kernel.str_cmp %s, %s
// CHECK-NEXT:    %u = kernel.str_case upper %s
// CHECK-NEXT:    %ol = kernel.optional_new(%r) : !kernel.optional<!kernel.list<f32>>
// CHECK-NEXT:    %zm = kernel.zip_map %k, %p : memref<2x!onnx.string>, memref<?x2xf32> -> !kernel.list<!onnx.map<!onnx.string, f32>>
// CHECK-NEXT:    func.return %ol, %zm : !kernel.optional<!kernel.list<f32>>, !kernel.list<!onnx.map<!onnx.string, f32>>
func.func @values(%a: memref<3xf32>, %b: memref<?xf32>, %i: index, %s: !onnx.string, %k: memref<2x!onnx.string>, %p: memref<?x2xf32>) -> (!kernel.optional<!kernel.list<f32>>, !kernel.list<!onnx.map<!onnx.string, f32>>) {
  %l = kernel.list_new(%a, %b) : (memref<3xf32>, memref<?xf32>) -> !kernel.list<f32>
  %e = kernel.list_new() : () -> !kernel.list<f32>
  %n = kernel.list_length %l : !kernel.list<f32>
  %g = kernel.list_get %l[%i] : !kernel.list<f32> -> memref<?xf32>
  %m = kernel.list_insert %l, %a, %n : !kernel.list<f32>, memref<3xf32>
  %r = kernel.list_erase %m, %i : !kernel.list<f32>
  %o = kernel.optional_new(%a) : !kernel.optional<memref<3xf32>>
  %z = kernel.optional_new() : !kernel.optional<memref<3xf32>>
  %h = kernel.optional_has %o : !kernel.optional<memref<3xf32>>
  %v = kernel.optional_get %o : !kernel.optional<memref<3xf32>>
  %c = kernel.str_cmp %s, %s
  %u = kernel.str_case upper %s
  %ol = kernel.optional_new(%r) : !kernel.optional<!kernel.list<f32>>
  %zm = kernel.zip_map %k, %p : memref<2x!onnx.string>, memref<?x2xf32> -> !kernel.list<!onnx.map<!onnx.string, f32>>
  func.return %ol, %zm : !kernel.optional<!kernel.list<f32>>, !kernel.list<!onnx.map<!onnx.string, f32>>
}
