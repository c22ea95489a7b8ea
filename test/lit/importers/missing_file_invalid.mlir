// A model file that does not exist is reported by name.
// RUN: not rung import %t.does-not-exist.onnx 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     rung: error: no such file: '{{.*}}.does-not-exist.onnx'
// CHECK-NOT: Traceback
