// RUN: rm -rf %t && mkdir %t
// RUN: rung compile %s -o %t/out | filecheck %s
// RUN: ls %t/out | filecheck %s --check-prefix=FILES
// RUN: not rung compile %s -o %t/out 2>&1 | filecheck %s --check-prefix=EXISTS
// RUN: rung compile %s -o %t/out --prefix net --emit-only --print-timings | filecheck %s --check-prefix=EMIT
// RUN: rung compile %s -o %t/out --force | filecheck %s
// RUN: head -5 %t/out/compile.c | filecheck %s --check-prefix=BUILD

// `rung compile` lowers a model to the kernel dialect, generates C and builds a
// shared library: one summary line. Files of an earlier compile are only
// overwritten with --force; the .c names the command that rebuilds it.

func.func @main(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<2x3xf32> {onnx.name = "y"}) {
  %c = onnx.Constant() {value = dense<[-1.5, 2.0, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %s = onnx.Add(%x, %c) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = onnx.Relu(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK: wrote 10 files to {{.*}}out: compile.c, compile.h, rung_gemm.h, rung_math.h, rung_nms.h, rung_runtime.h, rung_seq.h, rung_sort.h, rung_tensor.h, libcompile.so (arena {{[0-9]+}} bytes, weights 0 bytes)

// FILES:      compile.c
// FILES-NEXT: compile.h
// FILES-NEXT: libcompile.so
// FILES-NEXT: rung_gemm.h
// FILES-NEXT: rung_math.h
// FILES-NEXT: rung_nms.h
// FILES-NEXT: rung_runtime.h
// FILES-NEXT: rung_seq.h
// FILES-NEXT: rung_sort.h

// EXISTS: rung: error: '{{.*}}out' already holds compile.c, compile.h, libcompile.so; use --force to overwrite them, or choose another output folder or --prefix
// EXISTS-NOT: Traceback

// EMIT:      wrote 9 files to {{.*}}out: net.c, net.h, rung_gemm.h, rung_math.h, rung_nms.h, rung_runtime.h, rung_seq.h, rung_sort.h, rung_tensor.h (arena {{[0-9]+}} bytes, weights 0 bytes)
// EMIT-NEXT:   import          {{[0-9]+\.[0-9]+}} s
// EMIT-NEXT:   lower-to-core   {{[0-9]+\.[0-9]+}} s
// EMIT-NEXT:   lower-to-kernel {{[0-9]+\.[0-9]+}} s
// EMIT-NEXT:   C generation    {{[0-9]+\.[0-9]+}} s
// EMIT-NEXT:   total           {{[0-9]+\.[0-9]+}} s

// BUILD: Build: cc {{.*}} compile.c -o libcompile.so -lm
