// The verifiers of kernel lists, optionals, maps and strings name what disagrees.
// RUN: opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     kernel.list_new: element 0 of type memref<3xi64> does not fit !kernel.list<f32>
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.list_get: the result of type memref<?xi32> does not fit !kernel.list<f32>
// CHECK:     {{^}}// {{-----}}
// CHECK:     !kernel.list's parameter is an element type (f32, i64, !onnx.string), got memref<3xf32>
// CHECK:     {{^}}// {{-----}}
// CHECK:     !kernel.optional holds a memref or a !kernel.list, got f32
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.str_cmp: operands must be strings, got i32, i32
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.zip_map: keys memref<3xi64> (a vector) and values memref<?x2xf32> (a matrix) do not give maps of !onnx.map<!onnx.string, f32>

func.func @element_type(%a: memref<3xi64>) -> !kernel.list<f32> {
  %l = kernel.list_new(%a) : (memref<3xi64>) -> !kernel.list<f32>
  func.return %l : !kernel.list<f32>
}

// -----

func.func @get_type(%l: !kernel.list<f32>, %i: index) -> memref<?xi32> {
  %g = kernel.list_get %l[%i] : !kernel.list<f32> -> memref<?xi32>
  func.return %g : memref<?xi32>
}

// -----

func.func @list_of_buffers(%l: !kernel.list<memref<3xf32>>) {
  func.return
}

// -----

func.func @optional_of_scalar(%o: !kernel.optional<f32>) {
  func.return
}

// -----

func.func @compare_numbers(%a: i32) -> i32 {
  %c = "kernel.str_cmp"(%a, %a) : (i32, i32) -> i32
  func.return %c : i32
}

// -----

func.func @zip_map_keys(%k: memref<3xi64>, %p: memref<?x2xf32>) -> !kernel.list<!onnx.map<!onnx.string, f32>> {
  %z = kernel.zip_map %k, %p : memref<3xi64>, memref<?x2xf32> -> !kernel.list<!onnx.map<!onnx.string, f32>>
  func.return %z : !kernel.list<!onnx.map<!onnx.string, f32>>
}
