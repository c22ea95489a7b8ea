// kernel-fuse-elementwise leaves a producer alone when inlining it would be
// wrong or would not pay: its input is overwritten before the consumer, its
// buffer is used by something other than loads (a matmul, a copy, a view,
// the function's result), it writes its buffer at other indices, or an
// expensive body would be computed more than once per element.
// RUN: opt %s -p kernel-fuse-elementwise | filecheck %s

// %x is overwritten between the producer and the consumer: the consumer must
// read the old value, through %t.
// CHECK-LABEL: func.func @input_overwritten
// CHECK:         %t = kernel.alloc()
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         kernel.store %{{.*}}, %x[%{{.*}}]
// CHECK:         kernel.load %t[%{{.*}}]
func.func @input_overwritten(%x: memref<16xf32>) -> memref<16xf32> {
  %t = kernel.alloc() : memref<16xf32>
  kernel.loop (%i) in (16) [parallel] {
    %v = kernel.load %x[%i] : memref<16xf32>
    %n = arith.negf %v : f32
    kernel.store %n, %t[%i] : memref<16xf32>
    kernel.yield
  }
  %one = arith.constant 1.000000e+00 : f32
  kernel.loop (%i) in (16) [parallel] {
    kernel.store %one, %x[%i] : memref<16xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<16xf32>
  kernel.loop (%i) in (16) [parallel] {
    %v = kernel.load %t[%i] : memref<16xf32>
    kernel.store %v, %y[%i] : memref<16xf32>
    kernel.yield
  }
  func.return %y : memref<16xf32>
}

// The same through a view of %x.
// CHECK-LABEL: func.func @input_overwritten_through_view
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         kernel.load %t[%{{.*}}]
func.func @input_overwritten_through_view(%x: memref<16xf32>) -> memref<16xf32> {
  %t = kernel.alloc() : memref<16xf32>
  kernel.loop (%i) in (16) [parallel] {
    %v = kernel.load %x[%i] : memref<16xf32>
    %n = arith.negf %v : f32
    kernel.store %n, %t[%i] : memref<16xf32>
    kernel.yield
  }
  %w = kernel.view %x() : memref<16xf32> -> memref<4x4xf32>
  %one = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  kernel.store %one, %w[%c0, %c0] : memref<4x4xf32>
  %y = kernel.alloc() : memref<16xf32>
  kernel.loop (%i) in (16) [parallel] {
    %v = kernel.load %t[%i] : memref<16xf32>
    kernel.store %v, %y[%i] : memref<16xf32>
    kernel.yield
  }
  func.return %y : memref<16xf32>
}

// kernel.matmul and kernel.copy read whole buffers, not elements.
// CHECK-LABEL: func.func @read_by_matmul_and_copy
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         kernel.matmul %t, %t, %y
// CHECK:         kernel.store %{{.*}}, %u[%{{.*}}]
// CHECK:         kernel.copy %u, %z
func.func @read_by_matmul_and_copy(%x: memref<1x4x4xf32>) -> (memref<1x4x4xf32>, memref<8xf32>) {
  %t = kernel.alloc() : memref<1x4x4xf32>
  kernel.loop (%i, %j, %k) in (1, 4, 4) [parallel, parallel, parallel] {
    %v = kernel.load %x[%i, %j, %k] : memref<1x4x4xf32>
    %n = arith.negf %v : f32
    kernel.store %n, %t[%i, %j, %k] : memref<1x4x4xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<1x4x4xf32>
  kernel.matmul %t, %t, %y : memref<1x4x4xf32>, memref<1x4x4xf32>, memref<1x4x4xf32>
  %u = kernel.alloc() : memref<8xf32>
  %one = arith.constant 1.000000e+00 : f32
  kernel.loop (%i) in (8) [parallel] {
    kernel.store %one, %u[%i] : memref<8xf32>
    kernel.yield
  }
  %z = kernel.alloc() : memref<8xf32>
  kernel.copy %u, %z : memref<8xf32>, memref<8xf32>
  func.return %y, %z : memref<1x4x4xf32>, memref<8xf32>
}

// A returned buffer, or one that is viewed, stays (and so does its producer).
// CHECK-LABEL: func.func @returned_and_viewed
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         kernel.load %t[%{{.*}}]
// CHECK:         kernel.store %{{.*}}, %u[%{{.*}}]
// CHECK:         kernel.view %u
// CHECK:         kernel.load %u[%{{.*}}]
func.func @returned_and_viewed(%x: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>, memref<2x4xf32>) {
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %v = kernel.load %x[%i] : memref<8xf32>
    %n = arith.negf %v : f32
    kernel.store %n, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %u = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %v = kernel.load %t[%i] : memref<8xf32>
    %n = arith.negf %v : f32
    kernel.store %n, %u[%i] : memref<8xf32>
    kernel.yield
  }
  %w = kernel.view %u() : memref<8xf32> -> memref<2x4xf32>
  %y = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %v = kernel.load %u[%i] : memref<8xf32>
    kernel.store %v, %y[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %t, %y, %w : memref<8xf32>, memref<8xf32>, memref<2x4xf32>
}

// Not producers: a store at other indices than the ivs (a slab of a concat),
// a second store, a nest over part of its buffer, a reduction dim.
// CHECK-LABEL: func.func @not_producers
// CHECK-COUNT-5: kernel.loop
func.func @not_producers(%x: memref<8xf32>) -> memref<8xf32> {
  %c4 = arith.constant 4 : index
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (4) [parallel] {
    %v = kernel.load %x[%i] : memref<8xf32>
    %j = arith.addi %i, %c4 : index
    kernel.store %v, %t[%j] : memref<8xf32>
    kernel.store %v, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %u = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (4) [parallel] {
    %v = kernel.load %x[%i] : memref<8xf32>
    kernel.store %v, %u[%i] : memref<8xf32>
    kernel.yield
  }
  %w = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [reduction] {
    %v = kernel.load %x[%i] : memref<8xf32>
    kernel.store %v, %w[%i] : memref<8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %t[%i] : memref<8xf32>
    %b = kernel.load %u[%i] : memref<8xf32>
    %c = kernel.load %w[%i] : memref<8xf32>
    %s = arith.addf %a, %b : f32
    %r = arith.addf %s, %c : f32
    kernel.store %r, %y[%i] : memref<8xf32>
    kernel.yield
  }
  %z = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %y[%i] : memref<8xf32>
    %c7 = arith.constant 7 : index
    %j = arith.subi %c7, %i : index
    %b = kernel.load %y[%j] : memref<8xf32>
    %s = arith.addf %a, %b : f32
    kernel.store %s, %z[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %z : memref<8xf32>
}

// An expensive body (exp) is not computed twice: not for two consumers, and
// not for a consumer whose loops run more often than the buffer has elements.
// CHECK-LABEL: func.func @expensive_recomputation
// CHECK:         math.exp
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         kernel.store %{{.*}}, %u[%{{.*}}]
// CHECK:         kernel.store %{{.*}}, %v[%{{.*}}]
// CHECK:         math.exp
// CHECK:         kernel.store %{{.*}}, %e[%{{.*}}]
// CHECK:         kernel.load %e[%{{.*}}]
func.func @expensive_recomputation(%x: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>, memref<4x8xf32>) {
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %x[%i] : memref<8xf32>
    %b = math.exp %a : f32
    kernel.store %b, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %u = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %t[%i] : memref<8xf32>
    kernel.store %a, %u[%i] : memref<8xf32>
    kernel.yield
  }
  %v = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %t[%i] : memref<8xf32>
    %n = arith.negf %a : f32
    kernel.store %n, %v[%i] : memref<8xf32>
    kernel.yield
  }
  %e = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %x[%i] : memref<8xf32>
    %b = math.exp %a : f32
    kernel.store %b, %e[%i] : memref<8xf32>
    kernel.yield
  }
  %w = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %a = kernel.load %e[%j] : memref<8xf32>
    kernel.store %a, %w[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  func.return %u, %v, %w : memref<8xf32>, memref<8xf32>, memref<4x8xf32>
}

// Ops the pass does not know are assumed to write anything: no inlining
// across them.
// CHECK-LABEL: func.func @unknown_op_between
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         "test.op"
// CHECK:         kernel.load %t[%{{.*}}]
func.func @unknown_op_between(%x: memref<8xf32>) -> memref<8xf32> {
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %x[%i] : memref<8xf32>
    %n = arith.negf %a : f32
    kernel.store %n, %t[%i] : memref<8xf32>
    kernel.yield
  }
  "test.op"(%x) : (memref<8xf32>) -> ()
  %y = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %t[%i] : memref<8xf32>
    kernel.store %a, %y[%i] : memref<8xf32>
    kernel.yield
  }
  func.return %y : memref<8xf32>
}

// More than one op is not inlined into a loop carrying iter_args (a pooling
// window, a sum): that loop runs serially while the producer's nest
// vectorizes.
// CHECK-LABEL: func.func @not_into_register_reduction
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK:         kernel.loop (%k) in (8) [reduction] iter_args
// CHECK-NEXT:      kernel.load %t
func.func @not_into_register_reduction(%x: memref<4x8xf32>, %b: memref<8xf32>) -> memref<4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %t = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<4x8xf32>
    %w = kernel.load %b[%j] : memref<8xf32>
    %s = arith.addf %v, %w : f32
    %r = arith.maximumf %s, %zero : f32
    kernel.store %r, %t[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<4xf32>
  kernel.loop (%i) in (4) [parallel] {
    %s = kernel.loop (%k) in (8) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %t[%i, %k] : memref<4x8xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %y[%i] : memref<4xf32>
    kernel.yield
  }
  func.return %y : memref<4xf32>
}

// A load in a control-flow loop (scf.while) may run any number of times:
// an expensive body is not inlined there.
// CHECK-LABEL: func.func @not_into_while
// CHECK:         math.exp
// CHECK:         kernel.store %{{.*}}, %t[%{{.*}}]
// CHECK:         scf.while
// CHECK:           kernel.load %t
func.func @not_into_while(%x: memref<8xf32>, %y: memref<8xf32>) {
  %t = kernel.alloc() : memref<8xf32>
  kernel.loop (%i) in (8) [parallel] {
    %a = kernel.load %x[%i] : memref<8xf32>
    %e = math.exp %a : f32
    kernel.store %e, %t[%i] : memref<8xf32>
    kernel.yield
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.while (%a = %c0) : (index) -> index {
    %more = arith.cmpi slt, %a, %c8 : index
    scf.condition(%more) %a : index
  } do {
  ^bb0(%b: index):
    %v = kernel.load %t[%b] : memref<8xf32>
    kernel.store %v, %y[%b] : memref<8xf32>
    %n = arith.addi %b, %c1 : index
    scf.yield %n : index
  }
  func.return
}
