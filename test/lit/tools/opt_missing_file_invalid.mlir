// RUN: not opt %S/Inputs/no-such-file.mlir 2>&1 | filecheck %s
// RUN: not opt %S/Inputs/no-such-model.onnx 2>&1 | filecheck %s --check-prefix=ONNX
// RUN: not opt %S/Inputs 2>&1 | filecheck %s --check-prefix=DIR
// RUN: echo "func.func @f() { func.return }" > %t.txt
// RUN: not opt %t.txt 2>&1 | filecheck %s --check-prefix=SUFFIX
// RUN: opt -f mlir %t.txt | filecheck %s --check-prefix=FORMAT

// An input opt cannot read, of any kind, is one line and exit code 1. The
// format comes from the suffix, or from -f.

// CHECK:  opt: error: cannot read '{{.*}}no-such-file.mlir': No such file or directory
// ONNX:   opt: error: no such file: '{{.*}}no-such-model.onnx'
// DIR:    opt: error: cannot read '{{.*}}Inputs': it is a directory
// SUFFIX: opt: error: cannot tell the format of '{{.*}}.txt' from its suffix '.txt'
// FORMAT: func.func @f()
