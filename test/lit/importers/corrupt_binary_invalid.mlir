// Bytes that are not a serialized ModelProto are refused in one line, and an
// empty file gets its own message.
// RUN: echo "this is not a protobuf" > %t.onnx
// RUN: not rung import %t.onnx 2>&1 | filecheck %s --check-prefix=GARBAGE
// RUN: %python -c "open(r'%t.empty.onnx', 'wb').close()"
// RUN: not rung import %t.empty.onnx 2>&1 | filecheck %s --check-prefix=EMPTY

// GARBAGE-NOT: Traceback
// GARBAGE:     rung: error: '{{.*}}.onnx' is not a valid ONNX model: the protobuf is corrupt or truncated
// GARBAGE-NOT: Traceback

// EMPTY-NOT: Traceback
// EMPTY:     rung: error: '{{.*}}.empty.onnx' is empty; expected a serialized ONNX ModelProto
// EMPTY-NOT: Traceback
