// The kernel verifiers check that indices, ranks, sizes and loop forms agree.
// RUN: opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     kernel.load: 1 indices for a buffer of rank 2 (memref<2x3xf32>)
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.store: value of type i32 into a buffer of f32
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.alloc: memref<?x4xf32> has 1 dynamic dims but 0 sizes are given
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.view: memref<6xf32> has 6 elements, memref<2x2xf32> has 4
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.loop: a nest with iter_args must have only reduction dims
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.matmul: shapes (1, 2, 3) x (1, 4, 5) -> (1, 2, 5) do not agree
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.dim: dim 2 of a rank-2 buffer
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.matmul: a 'row' epilogue buffer of 3 elements for a 2x5 result
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.matmul: epilogue step 'pow:row' is not <op>:<index>
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.matmul: an epilogue needs a batch of 1
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.call: @external takes no epilogue
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.call: a 'full' epilogue buffer of 4 elements for a 2x16 result
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.call: epilogue buffers must be f32
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.call: @conv_shift_float takes 3 buffers and 7 integer arguments, not 3 and 5
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.matmul: activation 'relu6' is not one of silu, gelu, hardswish
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.matmul: an activation needs a batch of 1
// CHECK:     {{^}}// {{-----}}
// CHECK:     kernel.call: @external takes no epilogue
// CHECK-NOT: Traceback

func.func @load_rank(%x: memref<2x3xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = kernel.load %x[%c0] : memref<2x3xf32>
  func.return %v : f32
}

// -----

func.func @store_type(%x: memref<4xf32>, %v: i32) {
  %c0 = arith.constant 0 : index
  "kernel.store"(%v, %x, %c0) : (i32, memref<4xf32>, index) -> ()
  func.return
}

// -----

func.func @alloc_sizes() -> memref<?x4xf32> {
  %b = "kernel.alloc"() : () -> memref<?x4xf32>
  func.return %b : memref<?x4xf32>
}

// -----

func.func @view_count(%x: memref<6xf32>) -> memref<2x2xf32> {
  %v = kernel.view %x() : memref<6xf32> -> memref<2x2xf32>
  func.return %v : memref<2x2xf32>
}

// -----

func.func @iter_args_parallel(%x: memref<4xf32>) -> f32 {
  %z = arith.constant 0.0 : f32
  %s = kernel.loop (%i) in (4) [parallel] iter_args(%acc = %z : f32) -> f32 {
    kernel.yield %acc : f32
  }
  func.return %s : f32
}

// -----

func.func @matmul_shapes(%a: memref<1x2x3xf32>, %b: memref<1x4x5xf32>, %c: memref<1x2x5xf32>) {
  kernel.matmul %a, %b, %c : memref<1x2x3xf32>, memref<1x4x5xf32>, memref<1x2x5xf32>
  func.return
}

// -----

func.func @dim_range(%x: memref<2x3xf32>) -> index {
  %d = kernel.dim %x[2] : memref<2x3xf32>
  func.return %d : index
}

// -----

func.func @epilogue_rows(%a: memref<1x2x3xf32>, %b: memref<1x3x5xf32>, %c: memref<1x2x5xf32>, %r: memref<3xf32>) {
  kernel.matmul %a, %b, %c epilogue ["add:row" %r] : memref<1x2x3xf32>, memref<1x3x5xf32>, memref<1x2x5xf32>, memref<3xf32>
  func.return
}

// -----

func.func @epilogue_step(%a: memref<1x2x3xf32>, %b: memref<1x3x5xf32>, %c: memref<1x2x5xf32>, %r: memref<2xf32>) {
  kernel.matmul %a, %b, %c epilogue ["pow:row" %r] : memref<1x2x3xf32>, memref<1x3x5xf32>, memref<1x2x5xf32>, memref<2xf32>
  func.return
}

// -----

func.func @epilogue_batch(%a: memref<2x2x3xf32>, %b: memref<2x3x5xf32>, %c: memref<2x2x5xf32>, %r: memref<2xf32>) {
  kernel.matmul %a, %b, %c epilogue ["add:row" %r] : memref<2x2x3xf32>, memref<2x3x5xf32>, memref<2x2x5xf32>, memref<2xf32>
  func.return
}

// -----

func.func @call_epilogue_callee(%x: memref<4xf32>, %r: memref<f32>) {
  kernel.call @external(%x, %x) [0, 0] epilogue ["add:scalar" %r] : memref<4xf32>, memref<4xf32>, memref<f32>
  func.return
}

// -----

func.func @call_epilogue_size(%x: memref<1x3x4x4xf32>, %w: memref<2x3x3x3xf32>, %y: memref<1x2x4x4xf32>, %f: memref<4xf32>) {
  kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1] epilogue ["add:full" %f] : memref<1x3x4x4xf32>, memref<2x3x3x3xf32>, memref<1x2x4x4xf32>, memref<4xf32>
  func.return
}

// -----

func.func @call_epilogue_type(%x: memref<1x3x4x4xf32>, %w: memref<2x3x3x3xf32>, %y: memref<1x2x4x4xf32>, %r: memref<2xi32>) {
  kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1] epilogue ["add:row" %r] : memref<1x3x4x4xf32>, memref<2x3x3x3xf32>, memref<1x2x4x4xf32>, memref<2xi32>
  func.return
}

// -----

// The runtime's conv reads 7 arguments (dilations, low pads, groups, strides) without
// counting them: a call with the 5 of an older form is rejected, not run.
func.func @call_arity(%x: memref<1x3x4x4xf32>, %w: memref<2x3x3x3xf32>, %y: memref<1x2x4x4xf32>) {
  kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1] : memref<1x3x4x4xf32>, memref<2x3x3x3xf32>, memref<1x2x4x4xf32>
  func.return
}

// -----

func.func @activation_unknown(%a: memref<1x2x3xf32>, %b: memref<1x3x5xf32>, %c: memref<1x2x5xf32>) {
  kernel.matmul %a, %b, %c {activation = "relu6"} : memref<1x2x3xf32>, memref<1x3x5xf32>, memref<1x2x5xf32>
  func.return
}

// -----

func.func @activation_batch(%a: memref<2x2x3xf32>, %b: memref<2x3x5xf32>, %c: memref<2x2x5xf32>) {
  kernel.matmul %a, %b, %c {activation = "silu"} : memref<2x2x3xf32>, memref<2x3x5xf32>, memref<2x2x5xf32>
  func.return
}

// -----

func.func @activation_callee(%x: memref<4xf32>) {
  kernel.call @external(%x, %x) [0] {activation = "silu"} : memref<4xf32>, memref<4xf32>
  func.return
}

