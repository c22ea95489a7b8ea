// C generation of structured control flow and kernel.subview.
// - scf.if with results: the result's pointer and `?` dims are variables
//   declared before the `if` and assigned in each branch (a `static const`
//   weight is cast);
// - scf.while: carried values are variables initialized from the operands;
//   `for (;;)` runs the before-region and breaks on a false condition; the
//   yield assigns every carried variable at once, through temporaries when
//   they are swapped; when scf.condition forwards other values than the
//   before-region's arguments, the results are variables of their own;
// - kernel.subview is a pointer into its source at the leading indices.
// RUN: opt %s -t c | filecheck %s

// CHECK:        bool cond = c[0];
// CHECK:        float *r = 0;
// CHECK-NEXT:   int64_t r_d0 = 0;
// CHECK-NEXT:   if (cond) {
// CHECK-NEXT:     r = flat;
// CHECK-NEXT:     r_d0 = flat_d0;
// CHECK-NEXT:   } else {
// CHECK-NEXT:     const int64_t wv_d0 = 2;
// CHECK-NEXT:     float *const wv = (float *)w;
// CHECK-NEXT:     r = wv;
// CHECK-NEXT:     r_d0 = wv_d0;
// CHECK-NEXT:   }
// CHECK-NEXT:   float *const slab = x + 1 * 12;
// CHECK-NEXT:   float *const row = x + (1 * 3 + 2) * 4;
// CHECK-NEXT:   int64_t max = m[0];
// CHECK-NEXT:   float *const a = x + (1 * 3 + 1) * 4;
// CHECK-NEXT:   int64_t i = 0;
// CHECK-NEXT:   float *u = a;
// CHECK-NEXT:   float *v = row;
// CHECK-NEXT:   for (;;) {
// CHECK-NEXT:     bool go = i < max;
// CHECK-NEXT:     if (!go) break;
// CHECK-NEXT:     int64_t next = (int64_t)((uint64_t)i + (uint64_t)1);
// CHECK-NEXT:     float *u_next = v;
// CHECK-NEXT:     float *v_next = u;
// CHECK-NEXT:     i = next;
// CHECK-NEXT:     u = u_next;
// CHECK-NEXT:     v = v_next;
// CHECK-NEXT:   }
// CHECK:        float *g = dyn;
// CHECK-NEXT:   int64_t g_d0 = dyn_d0;
// CHECK-NEXT:   float *grown = 0;
// CHECK-NEXT:   int64_t grown_d0 = 0;
// CHECK-NEXT:   for (;;) {
// CHECK-NEXT:     bool big = g_d0 > 1;
// CHECK-NEXT:     const int64_t gv_d0 = g_d0;
// CHECK-NEXT:     float *const gv = (float *)g;
// CHECK-NEXT:     grown = gv;
// CHECK-NEXT:     grown_d0 = gv_d0;
// CHECK-NEXT:     if (!big) break;
// CHECK-NEXT:     float *const last = grown + grown_d0 * 4;
// CHECK-NEXT:     const int64_t hd_d0 = grown_d0;
// CHECK-NEXT:     const int64_t hd_d1 = grown_d0;
// CHECK-NEXT:     float *const hd = (float *)grown;
// CHECK-NEXT:     const int64_t hrow_d0 = hd_d1;
// CHECK-NEXT:     float *const hrow = hd + 1 * hrow_d0;
// CHECK-NEXT:     const int64_t hv_d0 = 1;
// CHECK-NEXT:     float *const hv = (float *)grown;
// CHECK-NEXT:     g = hv;
// CHECK-NEXT:     g_d0 = hv_d0;
// CHECK-NEXT:   }
// CHECK-NEXT:   float *pick = 0;
// CHECK-NEXT:   if (cond) {
// CHECK-NEXT:     pick = (float *)w;
// CHECK-NEXT:   } else {
// CHECK-NEXT:     float *const neg = (float *)rung_heap_alloc(&heap, (size_t)(2) * sizeof(float));
// CHECK-NEXT:     if (!neg) RUNG_FAIL("out of memory");
// CHECK-NEXT:     pick = neg;
// CHECK-NEXT:   }
// CHECK:        outputs[2].data = rung_copy_out(u, (size_t)(4) * sizeof(float));
// CHECK:        outputs[3].data = rung_copy_out(v, (size_t)(4) * sizeof(float));
// CHECK:        outputs[4].shape[0] = grown_d0;
func.func @control(%c: memref<i1>, %x: memref<?x3x4xf32>, %m: memref<i64>) -> (memref<?xf32>, memref<3x4xf32>, memref<4xf32>, memref<4xf32>, memref<?x4xf32>, memref<2xf32>) {
  %cond = kernel.load %c[] : memref<i1>
  %w = kernel.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %n = kernel.dim %x[0] : memref<?x3x4xf32>
  %flat = kernel.view %x(%n) : memref<?x3x4xf32> -> memref<?xf32>
  %r = scf.if %cond -> (memref<?xf32>) {
    scf.yield %flat : memref<?xf32>
  } else {
    %two = arith.constant 2 : index
    %wv = kernel.view %w(%two) : memref<2xf32> -> memref<?xf32>
    scf.yield %wv : memref<?xf32>
  }
  %one = arith.constant 1 : index
  %slab = kernel.subview %x[%one] : memref<?x3x4xf32> -> memref<3x4xf32>
  %two = arith.constant 2 : index
  %row = kernel.subview %x[%one, %two] : memref<?x3x4xf32> -> memref<4xf32>
  %max = kernel.load %m[] : memref<i64>
  %a = kernel.subview %x[%one, %one] : memref<?x3x4xf32> -> memref<4xf32>
  %zero = arith.constant 0 : i64
  %trips, %p, %q = scf.while (%i = %zero, %u = %a, %v = %row) : (i64, memref<4xf32>, memref<4xf32>) -> (i64, memref<4xf32>, memref<4xf32>) {
    %go = arith.cmpi slt, %i, %max : i64
    scf.condition(%go) %i, %u, %v : i64, memref<4xf32>, memref<4xf32>
  } do {
  ^bb0(%j: i64, %s: memref<4xf32>, %t: memref<4xf32>):
    %k = arith.constant 1 : i64
    %next = arith.addi %j, %k : i64
    scf.yield %next, %t, %s : i64, memref<4xf32>, memref<4xf32>
  }
  %dyn = kernel.view %x(%n) : memref<?x3x4xf32> -> memref<?x12xf32>
  %grown = scf.while (%g = %dyn) : (memref<?x12xf32>) -> memref<?x4xf32> {
    %gn = kernel.dim %g[0] : memref<?x12xf32>
    %big = arith.cmpi sgt, %gn, %one : index
    %gv = kernel.view %g(%gn) : memref<?x12xf32> -> memref<?x4xf32>
    scf.condition(%big) %gv : memref<?x4xf32>
  } do {
  ^bb0(%h: memref<?x4xf32>):
    %hn = kernel.dim %h[0] : memref<?x4xf32>
    %last = kernel.subview %h[%hn] : memref<?x4xf32> -> memref<4xf32>
    %hd = kernel.view %h(%hn, %hn) : memref<?x4xf32> -> memref<?x?xf32>
    %hrow = kernel.subview %hd[%one] : memref<?x?xf32> -> memref<?xf32>
    %hv = kernel.view %h(%one) : memref<?x4xf32> -> memref<?x12xf32>
    scf.yield %hv : memref<?x12xf32>
  }
  %pick = scf.if %cond -> (memref<2xf32>) {
    scf.yield %w : memref<2xf32>
  } else {
    %neg = kernel.alloc() : memref<2xf32>
    scf.yield %neg : memref<2xf32>
  }
  func.return %r, %slab, %p, %q, %grown, %pick : memref<?xf32>, memref<3x4xf32>, memref<4xf32>, memref<4xf32>, memref<?x4xf32>, memref<2xf32>
}
