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
