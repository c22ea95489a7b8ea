// C generation of string tensors: elements are `const char *` (UTF-8, NUL-
// terminated), loaded and stored as pointers; a string constant stays in the
// source, its bytes escaped in octal (quotes, backslashes and `?` escaped);
// kernel.str_cmp is strcmp. A string input is checked (dtype 8, shape, data
// not NULL) and a string output packed with its bytes into one block.
// RUN: opt %s -t c | filecheck %s

// CHECK:      static const char *const c[3] = {
// CHECK-NEXT:   "a", "\"\\\?", "\303\251t\303\251\012",
// CHECK-NEXT: };
// CHECK:      if (!rung_tensor_fits(&inputs[0], 8, 1, (const int64_t[]){3})) return rung_error("input 0 ('x')", "has the wrong type or shape (or no strings)");
// CHECK:      const rung_tensor *const x_item = &inputs[0];
// CHECK-NEXT: const char * *const x = (const char * *)x_item->data;
// CHECK:        for (int64_t [[I:[a-z0-9]+]] = 0; [[I]] < 3; [[I]]++) {
// CHECK-NEXT:     const char * [[A:[a-z0-9]+]] = x{{\[}}[[I]]];
// CHECK-NEXT:     const char * [[B:[a-z0-9]+]] = c{{\[}}[[I]]];
// CHECK-NEXT:     int32_t [[S:[a-z0-9]+]] = strcmp([[A]], [[B]]);
// CHECK-NEXT:     bool [[EQ:[a-z0-9]+]] = [[S]] == 0;
// CHECK-NEXT:     z{{\[}}[[I]]] = [[EQ]];
// CHECK-NEXT:     y{{\[}}[[I]]] = [[B]];
// CHECK:      if (rung_pack_value(&(rung_tensor){(void *)y, 8, 1, {3}}, &outputs[1])) RUNG_FAIL("out of memory");
func.func @strings(%x: memref<3x!onnx.string>) -> (memref<3xi1>, memref<3x!onnx.string>) {
  %c = kernel.constant #onnx.strings<["a", "\"\\?", "\C3\A9t\C3\A9\0A"] : tensor<3x!onnx.string>>
  %z = kernel.alloc() : memref<3xi1>
  %y = kernel.alloc() : memref<3x!onnx.string>
  kernel.loop (%i) in (3) [parallel] {
    %a = kernel.load %x[%i] : memref<3x!onnx.string>
    %b = kernel.load %c[%i] : memref<3x!onnx.string>
    %s = kernel.str_cmp %a, %b
    %zero = arith.constant 0 : i32
    %eq = arith.cmpi eq, %s, %zero : i32
    kernel.store %eq, %z[%i] : memref<3xi1>
    kernel.store %b, %y[%i] : memref<3x!onnx.string>
    kernel.yield
  }
  func.return %z, %y : memref<3xi1>, memref<3x!onnx.string>
}
