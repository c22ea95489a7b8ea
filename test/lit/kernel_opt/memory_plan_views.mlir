// kernel-plan-memory: a use of a view (or of a view of a view) is a use of
// the buffer it aliases; returned buffers, and buffers behind returned views,
// live to the end of the function; kernel.copy, kernel.matmul and kernel.call
// operands are uses like loads and stores.
// RUN: opt %s -p kernel-plan-memory | filecheck %s

// %a is read through %w, a view of a view, by the last loop: it stays live,
// so neither %b, %c nor %d may take its bytes.
// CHECK-LABEL: func.func @view_extends
// CHECK-SAME:    kernel.arena_bytes = 768 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64}
// CHECK:         %b = kernel.alloc() {offset = 256 : i64}
// CHECK:         %c = kernel.alloc() {offset = 512 : i64}
// CHECK:         %d = kernel.alloc() {offset = 256 : i64}
func.func @view_extends(%x: memref<64xf32>) -> memref<64xf32> {
  %a = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %a[%i] : memref<64xf32>
    kernel.yield
  }
  %va = kernel.view %a() : memref<64xf32> -> memref<2x32xf32>
  %b = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %b[%i] : memref<64xf32>
    kernel.yield
  }
  %c = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %b[%i] : memref<64xf32>
    kernel.store %v, %c[%i] : memref<64xf32>
    kernel.yield
  }
  %w = kernel.view %va() : memref<2x32xf32> -> memref<64xf32>
  %d = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %u = kernel.load %c[%i] : memref<64xf32>
    %v = kernel.load %w[%i] : memref<64xf32>
    %r = arith.addf %u, %v : f32
    kernel.store %r, %d[%i] : memref<64xf32>
    kernel.yield
  }
  func.return %d : memref<64xf32>
}

// %out is filled by a copy early on and returned: code generation copies it
// out after the body, so %u and %res, allocated later, must not overlap it,
// while %u may take the bytes of %t, dead after the copy.
// CHECK-LABEL: func.func @copy_into_result
// CHECK-SAME:    kernel.arena_bytes = 768 : i64, kernel.peak_bytes = 768 : i64, kernel.total_bytes = 1024 : i64
// CHECK:         %out = kernel.alloc() {offset = 0 : i64}
// CHECK:         %t = kernel.alloc() {offset = 256 : i64}
// CHECK:         kernel.copy %t, %out
// CHECK:         %u = kernel.alloc() {offset = 256 : i64}
// CHECK:         %res = kernel.alloc() {offset = 512 : i64}
func.func @copy_into_result(%x: memref<64xf32>) -> (memref<64xf32>, memref<64xf32>) {
  %out = kernel.alloc() : memref<64xf32>
  %t = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %t[%i] : memref<64xf32>
    kernel.yield
  }
  kernel.copy %t, %out : memref<64xf32>, memref<64xf32>
  %u = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %u[%i] : memref<64xf32>
    kernel.yield
  }
  %res = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %e = kernel.load %u[%i] : memref<64xf32>
    kernel.store %e, %res[%i] : memref<64xf32>
    kernel.yield
  }
  func.return %out, %res : memref<64xf32>, memref<64xf32>
}

// The function returns a view of %a: %a lives to the end.
// CHECK-LABEL: func.func @returned_view
// CHECK-SAME:    kernel.arena_bytes = 512 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64}
// CHECK:         %b = kernel.alloc() {offset = 256 : i64}
func.func @returned_view(%x: memref<64xf32>) -> memref<8x8xf32> {
  %a = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %a[%i] : memref<64xf32>
    kernel.yield
  }
  %r = kernel.view %a() : memref<64xf32> -> memref<8x8xf32>
  %b = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %b[%i] : memref<64xf32>
    kernel.yield
  }
  func.return %r : memref<8x8xf32>
}

// Buffers used only by microkernels and library calls: %lhs is read by the
// matmul, %prod by the call, so %sorted may not reuse %prod but may take the
// bytes of %lhs.
// CHECK-LABEL: func.func @matmul_call
// CHECK-SAME:    kernel.arena_bytes = 512 : i64, kernel.peak_bytes = 512 : i64, kernel.total_bytes = 768 : i64
// CHECK:         %lhs = kernel.alloc() {offset = 0 : i64} : memref<1x8x8xf32>
// CHECK:         %prod = kernel.alloc() {offset = 256 : i64} : memref<1x8x8xf32>
// CHECK:         kernel.matmul %lhs, %w, %prod
// CHECK:         %sorted = kernel.alloc() {offset = 0 : i64} : memref<1x8x8xf32>
// CHECK:         kernel.call @external(%prod, %sorted)
func.func @matmul_call(%x: memref<1x8x8xf32>) -> memref<1x8x8xf32> {
  %w = kernel.constant dense<1.000000e+00> : tensor<1x8x8xf32>
  %lhs = kernel.alloc() : memref<1x8x8xf32>
  kernel.copy %x, %lhs : memref<1x8x8xf32>, memref<1x8x8xf32>
  %prod = kernel.alloc() : memref<1x8x8xf32>
  kernel.matmul %lhs, %w, %prod : memref<1x8x8xf32>, memref<1x8x8xf32>, memref<1x8x8xf32>
  %sorted = kernel.alloc() : memref<1x8x8xf32>
  kernel.call @external(%prod, %sorted) [2] : memref<1x8x8xf32>, memref<1x8x8xf32>
  func.return %sorted : memref<1x8x8xf32>
}
