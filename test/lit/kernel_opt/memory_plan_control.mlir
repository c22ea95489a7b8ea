// kernel-plan-memory follows buffers through control flow: a buffer yielded
// by scf.if lives as long as the if's result is used, and a buffer carried
// around an scf.while lives as long as the loop's results.
// RUN: opt %s -p kernel-plan-memory | filecheck %s

// %a and %b are both what %r may be: both stay live until %d has read %r;
// only %e, after that, may take their bytes.
// CHECK-LABEL: func.func @if_yields
// CHECK-SAME:    kernel.arena_bytes = 768 : i64, kernel.peak_bytes = 768 : i64, kernel.total_bytes = 1024 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64}
// CHECK:         %b = kernel.alloc() {offset = 256 : i64}
// CHECK:         %r = scf.if
// CHECK:         %d = kernel.alloc() {offset = 512 : i64}
// CHECK:         %e = kernel.alloc() {offset = 0 : i64}
func.func @if_yields(%c: i1, %x: memref<64xf32>) -> memref<64xf32> {
  %a = kernel.alloc() : memref<64xf32>
  kernel.copy %x, %a : memref<64xf32>, memref<64xf32>
  %b = kernel.alloc() : memref<64xf32>
  kernel.copy %x, %b : memref<64xf32>, memref<64xf32>
  %r = scf.if %c -> (memref<64xf32>) {
    scf.yield %a : memref<64xf32>
  } else {
    scf.yield %b : memref<64xf32>
  }
  %d = kernel.alloc() : memref<64xf32>
  kernel.copy %r, %d : memref<64xf32>, memref<64xf32>
  %e = kernel.alloc() : memref<64xf32>
  kernel.copy %d, %e : memref<64xf32>, memref<64xf32>
  func.return %e : memref<64xf32>
}

// %a enters the while as its carried buffer, so it may be what %w is: it
// stays live until %d has read %w. The heap buffer %t made in the body and
// yielded to the next iteration escapes its block and is not freed there;
// %s, used only inside the body, is freed at the end of each iteration.
// CHECK-LABEL: func.func @while_carries
// CHECK-SAME:    kernel.arena_bytes = 128 : i64, kernel.peak_bytes = 128 : i64, kernel.total_bytes = 128 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64}
// CHECK:         %w = scf.while
// CHECK:           %t = kernel.alloc(%n) : memref<?xf32>
// CHECK:           %s = kernel.alloc() : memref<4xf32>
// CHECK-NEXT:      kernel.copy %t, %s
// CHECK-NEXT:      kernel.dealloc %s
// CHECK-NOT:       kernel.dealloc
// CHECK:           scf.yield %tv
// CHECK:         %d = kernel.alloc() {offset = 64 : i64}
func.func @while_carries(%c: i1, %x: memref<4xf32>) -> memref<4xf32> {
  %a = kernel.alloc() : memref<4xf32>
  kernel.copy %x, %a : memref<4xf32>, memref<4xf32>
  %w = scf.while (%arg = %a) : (memref<4xf32>) -> memref<4xf32> {
    scf.condition(%c) %arg : memref<4xf32>
  } do {
  ^bb0(%body: memref<4xf32>):
    %n = arith.constant 4 : index
    %t = kernel.alloc(%n) : memref<?xf32>
    kernel.copy %body, %t : memref<4xf32>, memref<?xf32>
    %s = kernel.alloc() : memref<4xf32>
    kernel.copy %t, %s : memref<?xf32>, memref<4xf32>
    %tv = kernel.view %t() : memref<?xf32> -> memref<4xf32>
    scf.yield %tv : memref<4xf32>
  }
  %d = kernel.alloc() : memref<4xf32>
  kernel.copy %w, %d : memref<4xf32>, memref<4xf32>
  func.return %d : memref<4xf32>
}
