// kernel-fuse-matmul-epilogue: the elementwise nest that reads a matmul's product
// becomes the matmul's epilogue when it is a chain of binary float ops from the
// product to one store, each op's other operand loaded once per row, per column,
// per element or once; the product's buffer then takes the nest's buffer's place.
// The product must be read by nothing else, the nest must visit it in order, and
// nothing between the two may touch the buffers or write an operand.
// RUN: opt %s -p kernel-fuse-matmul-epilogue | filecheck %s

// A 1x1 conv's BatchNorm and ReLU: per-row scale and shift, then max with a
// scalar; the nest indexes the product by its ivs (its unit batch dim by a
// zero), and the operands made between the two move above the matmul.
// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-NEXT:    %c = kernel.alloc() : memref<1x4x6xf32>
// CHECK-NEXT:    %s = kernel.constant
// CHECK-NEXT:    %t = kernel.constant
// CHECK-NEXT:    %z = kernel.constant
// CHECK-NEXT:    kernel.matmul %w, %x, %c epilogue ["mul:row" %s, "add:row" %t, "max:scalar" %z] : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>, memref<4xf32>, memref<4xf32>, memref<f32>
// CHECK-NEXT:    %zero = arith.constant 0 : index
// CHECK-NEXT:    func.return %c : memref<1x4x6xf32>
func.func @conv_bn_relu(%w: memref<1x4x3xf32>, %x: memref<1x3x6xf32>) -> memref<1x4x6xf32> {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %s = kernel.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %t = kernel.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %z = kernel.constant dense<0.0> : tensor<f32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %a = kernel.load %s[%i] : memref<4xf32>
    %m = arith.mulf %v, %a : f32
    %b = kernel.load %t[%i] : memref<4xf32>
    %n = arith.addf %b, %m : f32
    %q = kernel.load %z[] : memref<f32>
    %r = arith.maximumf %n, %q : f32
    kernel.store %r, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y : memref<1x4x6xf32>
}

// A residual add over a flat view, the product on the right of a subtraction
// from a per-element operand (rsub), and a bias per column (a Linear layer's),
// whose nest carries the unit batch dim as an iv of bound 1.
// CHECK-LABEL: func.func @residual_and_columns
// CHECK:         kernel.matmul %a, %b, %c epilogue ["add:full" %[[RF:.*]], "rsub:full" %[[RF]], "add:col" %bias] {transpose_rhs}
// CHECK-NOT:     kernel.loop
// CHECK:         func.return %c
func.func @residual_and_columns(%a: memref<1x2x8xf32>, %b: memref<1x4x8xf32>, %res: memref<1x2x4xf32>, %bias: memref<4xf32>) -> memref<1x2x4xf32> {
  %c = kernel.alloc() : memref<1x2x4xf32>
  kernel.matmul %a, %b, %c {transpose_rhs} : memref<1x2x8xf32>, memref<1x4x8xf32>, memref<1x2x4xf32>
  %y = kernel.alloc() : memref<1x2x4xf32>
  %cf = kernel.view %c() : memref<1x2x4xf32> -> memref<1x2x4xf32>
  %rf = kernel.view %res() : memref<1x2x4xf32> -> memref<1x2x4xf32>
  kernel.loop (%n, %i, %j) in (1, 2, 4) [parallel, parallel, parallel] {
    %v = kernel.load %cf[%n, %i, %j] : memref<1x2x4xf32>
    %r = kernel.load %rf[%n, %i, %j] : memref<1x2x4xf32>
    %s = arith.addf %v, %r : f32
    %r2 = kernel.load %rf[%n, %i, %j] : memref<1x2x4xf32>
    %d = arith.subf %r2, %s : f32
    %bb = kernel.load %bias[%j] : memref<4xf32>
    %e = arith.addf %d, %bb : f32
    kernel.store %e, %y[%n, %i, %j] : memref<1x2x4xf32>
    kernel.yield
  }
  func.return %y : memref<1x2x4xf32>
}

// The product read twice (x * x) is no chain: the nest stays.
// CHECK-LABEL: func.func @square
// CHECK:         kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK:         kernel.loop
func.func @square(%w: memref<1x4x3xf32>, %x: memref<1x3x6xf32>) -> memref<1x4x6xf32> {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %m = arith.mulf %v, %v : f32
    kernel.store %m, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y : memref<1x4x6xf32>
}

// The product also read by another nest: it must keep its values, so the nest stays.
// CHECK-LABEL: func.func @product_read_twice
// CHECK:         kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK-COUNT-2: kernel.loop
func.func @product_read_twice(%w: memref<1x4x3xf32>, %x: memref<1x3x6xf32>, %s: memref<4xf32>) -> (memref<1x4x6xf32>, memref<1x4x6xf32>) {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %y2 = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %a = kernel.load %s[%i] : memref<4xf32>
    %m = arith.mulf %v, %a : f32
    kernel.store %m, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.store %v, %y2[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y, %y2 : memref<1x4x6xf32>, memref<1x4x6xf32>
}

// An operand written between the matmul and the nest: the epilogue would read it
// too early, so the nest stays.
// CHECK-LABEL: func.func @operand_written_between
// CHECK:         kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK:         kernel.loop (%{{.*}}) in (4) [parallel]
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}) in (4, 6)
func.func @operand_written_between(%w: memref<1x4x3xf32>, %x: memref<1x3x6xf32>, %s: memref<4xf32>) -> memref<1x4x6xf32> {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %w, %x, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %one = arith.constant 1.0 : f32
  kernel.loop (%i) in (4) [parallel] {
    kernel.store %one, %s[%i] : memref<4xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %a = kernel.load %s[%i] : memref<4xf32>
    %m = arith.mulf %v, %a : f32
    kernel.store %m, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y : memref<1x4x6xf32>
}

// A batch of 2: the epilogue takes one product, so the nest stays.
// CHECK-LABEL: func.func @batched
// CHECK:         kernel.matmul %w, %x, %c : memref<2x4x3xf32>, memref<2x3x6xf32>, memref<2x4x6xf32>
// CHECK:         kernel.loop
func.func @batched(%w: memref<2x4x3xf32>, %x: memref<2x3x6xf32>, %s: memref<f32>) -> memref<2x4x6xf32> {
  %c = kernel.alloc() : memref<2x4x6xf32>
  kernel.matmul %w, %x, %c : memref<2x4x3xf32>, memref<2x3x6xf32>, memref<2x4x6xf32>
  %y = kernel.alloc() : memref<2x4x6xf32>
  kernel.loop (%n, %i, %j) in (2, 4, 6) [parallel, parallel, parallel] {
    %v = kernel.load %c[%n, %i, %j] : memref<2x4x6xf32>
    %a = kernel.load %s[] : memref<f32>
    %m = arith.addf %v, %a : f32
    kernel.store %m, %y[%n, %i, %j] : memref<2x4x6xf32>
    kernel.yield
  }
  func.return %y : memref<2x4x6xf32>
}

// A conv the runtime computes by shifted rows takes the epilogue too, on its output seen
// as [batch, channels, points]: a bias per channel (row), a residual add (full) and a
// ReLU; the nest visits the NCHW output by its 4 ivs.
// CHECK-LABEL: func.func @shifted_conv
// CHECK:         %y = kernel.alloc() : memref<1x8x16x16xf32>
// CHECK-NEXT:    kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1] epilogue ["add:row" %b, "add:full" %res, "max:scalar" %z] : memref<1x4x16x16xf32>, memref<8x4x3x3xf32>, memref<1x8x16x16xf32>, memref<8xf32>, memref<1x8x16x16xf32>, memref<f32>
// CHECK-NOT:     kernel.loop
// CHECK:         func.return %y
func.func @shifted_conv(%x: memref<1x4x16x16xf32>, %w: memref<8x4x3x3xf32>, %b: memref<8xf32>, %res: memref<1x8x16x16xf32>, %z: memref<f32>) -> memref<1x8x16x16xf32> {
  %y = kernel.alloc() : memref<1x8x16x16xf32>
  kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1] : memref<1x4x16x16xf32>, memref<8x4x3x3xf32>, memref<1x8x16x16xf32>
  %out = kernel.alloc() : memref<1x8x16x16xf32>
  kernel.loop (%n, %c, %h, %v) in (1, 8, 16, 16) [parallel, parallel, parallel, parallel] {
    %p = kernel.load %y[%n, %c, %h, %v] : memref<1x8x16x16xf32>
    %bv = kernel.load %b[%c] : memref<8xf32>
    %s = arith.addf %p, %bv : f32
    %r = kernel.load %res[%n, %c, %h, %v] : memref<1x8x16x16xf32>
    %t = arith.addf %s, %r : f32
    %zv = kernel.load %z[] : memref<f32>
    %m = arith.maximumf %t, %zv : f32
    kernel.store %m, %out[%n, %c, %h, %v] : memref<1x8x16x16xf32>
    kernel.yield
  }
  func.return %out : memref<1x8x16x16xf32>
}

// Other calls take no epilogue: the nest after an im2col stays.
// CHECK-LABEL: func.func @other_call
// CHECK:         kernel.call @im2col_float(%x, %cols) [1, 1, 1, 1, 1, 1] : memref<1x1x2x2xf32>, memref<1x1x1x1x2x2xf32>
// CHECK:         kernel.loop
func.func @other_call(%x: memref<1x1x2x2xf32>, %z: memref<f32>) -> memref<1x1x1x1x2x2xf32> {
  %cols = kernel.alloc() : memref<1x1x1x1x2x2xf32>
  kernel.call @im2col_float(%x, %cols) [1, 1, 1, 1, 1, 1] : memref<1x1x2x2xf32>, memref<1x1x1x1x2x2xf32>
  %out = kernel.alloc() : memref<1x1x1x1x2x2xf32>
  kernel.loop (%a, %b, %c, %d, %e, %f) in (1, 1, 1, 1, 2, 2) [parallel, parallel, parallel, parallel, parallel, parallel] {
    %p = kernel.load %cols[%a, %b, %c, %d, %e, %f] : memref<1x1x1x1x2x2xf32>
    %zv = kernel.load %z[] : memref<f32>
    %m = arith.maximumf %p, %zv : f32
    kernel.store %m, %out[%a, %b, %c, %d, %e, %f] : memref<1x1x1x1x2x2xf32>
    kernel.yield
  }
  func.return %out : memref<1x1x1x1x2x2xf32>
}

// SiLU, x * (1 / (1 + exp(-x))) as Sigmoid then Mul lower, ends the chain as the
// product's activation, after the bias step; the depthwise conv's nest multiplies
// with the sigmoid on the left and adds the one on the right.
// CHECK-LABEL: func.func @conv_bias_silu
// CHECK:         kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1] epilogue ["add:row" %b] {activation = "silu"} : memref<1x4x16x16xf32>, memref<8x4x3x3xf32>, memref<1x8x16x16xf32>, memref<8xf32>
// CHECK-NOT:     kernel.loop
// CHECK:         func.return %y
func.func @conv_bias_silu(%x: memref<1x4x16x16xf32>, %w: memref<8x4x3x3xf32>, %b: memref<8xf32>) -> memref<1x8x16x16xf32> {
  %y = kernel.alloc() : memref<1x8x16x16xf32>
  kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1] : memref<1x4x16x16xf32>, memref<8x4x3x3xf32>, memref<1x8x16x16xf32>
  %out = kernel.alloc() : memref<1x8x16x16xf32>
  kernel.loop (%n, %c, %h, %v) in (1, 8, 16, 16) [parallel, parallel, parallel, parallel] {
    %p = kernel.load %y[%n, %c, %h, %v] : memref<1x8x16x16xf32>
    %bv = kernel.load %b[%c] : memref<8xf32>
    %s = arith.addf %p, %bv : f32
    %ng = arith.negf %s : f32
    %e = math.exp %ng : f32
    %one = arith.constant 1.000000e+00 : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %one, %d : f32
    %m = arith.mulf %r, %s : f32
    kernel.store %m, %out[%n, %c, %h, %v] : memref<1x8x16x16xf32>
    kernel.yield
  }
  func.return %out : memref<1x8x16x16xf32>
}

// SiLU straight after the product: an activation with no step.
// CHECK-LABEL: func.func @matmul_silu
// CHECK:         kernel.matmul %a, %b, %c {activation = "silu"} : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK-NOT:     kernel.loop
func.func @matmul_silu(%a: memref<1x4x3xf32>, %b: memref<1x3x6xf32>) -> memref<1x4x6xf32> {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %ng = arith.negf %v : f32
    %e = math.exp %ng : f32
    %one = arith.constant 1.000000e+00 : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %one, %d : f32
    %m = arith.mulf %v, %r : f32
    kernel.store %m, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y : memref<1x4x6xf32>
}

// Not SiLU, so the nest stays: 2 / (1 + exp(-x)), and SiLU followed by a step (the
// activation must come last).
// CHECK-LABEL: func.func @not_silu
// CHECK:         kernel.matmul %a, %b, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK:         kernel.loop
// CHECK:         kernel.matmul %a, %b, %c2 : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK:         kernel.loop
func.func @not_silu(%a: memref<1x4x3xf32>, %b: memref<1x3x6xf32>, %s: memref<4xf32>) -> (memref<1x4x6xf32>, memref<1x4x6xf32>) {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %ng = arith.negf %v : f32
    %e = math.exp %ng : f32
    %one = arith.constant 1.000000e+00 : f32
    %two = arith.constant 2.000000e+00 : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %two, %d : f32
    %m = arith.mulf %v, %r : f32
    kernel.store %m, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  %c2 = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c2 : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y2 = kernel.alloc() : memref<1x4x6xf32>
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c2[%zero, %i, %j] : memref<1x4x6xf32>
    %ng = arith.negf %v : f32
    %e = math.exp %ng : f32
    %one = arith.constant 1.000000e+00 : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %one, %d : f32
    %m = arith.mulf %v, %r : f32
    %sv = kernel.load %s[%i] : memref<4xf32>
    %q = arith.mulf %m, %sv : f32
    kernel.store %q, %y2[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y, %y2 : memref<1x4x6xf32>, memref<1x4x6xf32>
}

// GELU as torch exports it, x * (erf(x / sqrt(2)) + 1) * 0.5, its constants loaded from
// one-element buffers, after a Linear layer's bias: the gelu activation. HardSwish as it
// lowers, x * max(min(x * (1/6) + 0.5, 1), 0): the hardswish activation.
// CHECK-LABEL: func.func @gelu_hardswish
// CHECK:         kernel.matmul %a, %b, %c epilogue ["add:col" %bias] {activation = "gelu"} : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>, memref<6xf32>
// CHECK:         kernel.matmul %a, %b, %c2 {activation = "hardswish"} : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK-NOT:     kernel.loop
func.func @gelu_hardswish(%a: memref<1x4x3xf32>, %b: memref<1x3x6xf32>, %bias: memref<6xf32>) -> (memref<1x4x6xf32>, memref<1x4x6xf32>) {
  %sqrt2 = kernel.constant dense<1.41421354> : tensor<f32>
  %one = kernel.constant dense<1.0> : tensor<f32>
  %half = kernel.constant dense<0.5> : tensor<f32>
  %sixth = kernel.constant dense<0.166666672> : tensor<f32>
  %zerof = kernel.constant dense<0.0> : tensor<f32>
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %bv = kernel.load %bias[%j] : memref<6xf32>
    %x = arith.addf %bv, %v : f32
    %s = kernel.load %sqrt2[] : memref<f32>
    %d = arith.divf %x, %s : f32
    %e = math.erf %d : f32
    %o = kernel.load %one[] : memref<f32>
    %p = arith.addf %e, %o : f32
    %m = arith.mulf %x, %p : f32
    %h = kernel.load %half[] : memref<f32>
    %r = arith.mulf %m, %h : f32
    kernel.store %r, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  %c2 = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c2 : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y2 = kernel.alloc() : memref<1x4x6xf32>
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c2[%zero, %i, %j] : memref<1x4x6xf32>
    %k = kernel.load %sixth[] : memref<f32>
    %t = arith.mulf %v, %k : f32
    %hh = kernel.load %half[] : memref<f32>
    %u = arith.addf %t, %hh : f32
    %oo = kernel.load %one[] : memref<f32>
    %lo = arith.minimumf %u, %oo : f32
    %zz = kernel.load %zerof[] : memref<f32>
    %hi = arith.maximumf %lo, %zz : f32
    %q = arith.mulf %v, %hi : f32
    kernel.store %q, %y2[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y, %y2 : memref<1x4x6xf32>, memref<1x4x6xf32>
}

// HardSwish's ops with the max before the min are not the chain the pass knows: the nest
// stays.
// CHECK-LABEL: func.func @hardswish_other_order
// CHECK:         kernel.matmul %a, %b, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
// CHECK:         kernel.loop
func.func @hardswish_other_order(%a: memref<1x4x3xf32>, %b: memref<1x3x6xf32>) -> memref<1x4x6xf32> {
  %sixth = kernel.constant dense<0.166666672> : tensor<f32>
  %half = kernel.constant dense<0.5> : tensor<f32>
  %one = kernel.constant dense<1.0> : tensor<f32>
  %zerof = kernel.constant dense<0.0> : tensor<f32>
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x4x6xf32>
  %zero = arith.constant 0 : index
  kernel.loop (%i, %j) in (4, 6) [parallel, parallel] {
    %v = kernel.load %c[%zero, %i, %j] : memref<1x4x6xf32>
    %k = kernel.load %sixth[] : memref<f32>
    %t = arith.mulf %v, %k : f32
    %hh = kernel.load %half[] : memref<f32>
    %u = arith.addf %t, %hh : f32
    %zz = kernel.load %zerof[] : memref<f32>
    %lo = arith.maximumf %u, %zz : f32
    %oo = kernel.load %one[] : memref<f32>
    %hi = arith.minimumf %lo, %oo : f32
    %q = arith.mulf %v, %hi : f32
    kernel.store %q, %y[%zero, %i, %j] : memref<1x4x6xf32>
    kernel.yield
  }
  func.return %y : memref<1x4x6xf32>
}
