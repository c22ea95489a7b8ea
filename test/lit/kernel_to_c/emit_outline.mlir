// Outlining: a `_run` longer than `outline-above-lines` is split into static
// functions, each run of consecutive top-level ops (about `part-lines` lines)
// one `<prefix>_partN` that `_run` calls and checks. A part repeats the
// declarations of the arena buffers and views it uses (gcc still sees them
// disjoint) and receives the other names its lines read: inputs, heap buffers
// (`restrict` when all the part's pointers are inputs or heap buffers), scalars.
// What later code reads it hands back through pointers to `_run`'s variables
// of the same names. Its heap is `_run`'s, copied in and out; `RUNG_FAIL`
// leaves through its own `done:`. Below the threshold, `_run` is one function.
// RUN: opt %s -t 'c{outline-above-lines=1 part-lines=17}' | filecheck %s
// RUN: opt %s -t c | filecheck %s --check-prefix=WHOLE

// CHECK-LABEL: static int model_part1(char *const arena, rung_heap *const heap_io, float *const x, const int64_t x_d0, float **const h_out, int64_t *const h_d0_out) {
// CHECK-NEXT:    rung_heap heap = *heap_io;
// CHECK-NEXT:    int rc = 0;
// CHECK-NEXT:    float *const a = (float *)(arena + 0);
// CHECK-NEXT:    for (int64_t j = 0; j < 8; j++) {
// CHECK:         a[j] = acc;
// CHECK-NEXT:    }
// CHECK-NEXT:    const int64_t h_d0 = x_d0;
// CHECK-NEXT:    size_t h_bytes = 0;
// CHECK-NEXT:    if (!rung_buffer_bytes(&h_bytes, sizeof(float), 2, (const int64_t[]){h_d0, 8}))
// CHECK-NEXT:      RUNG_FAIL("{{.*}}: a buffer's run-time size is negative or too large to allocate");
// CHECK-NEXT:    float *const h = (float *)rung_heap_alloc(&heap, h_bytes);
// CHECK-NEXT:    if (!h) RUNG_FAIL("out of memory");
// CHECK-NEXT:    *h_out = h;
// CHECK-NEXT:    *h_d0_out = h_d0;
// CHECK-NEXT:  done: RUNG_UNUSED;
// CHECK-NEXT:    *heap_io = heap;
// CHECK-NEXT:    return rc;
// CHECK-NEXT:  }

// CHECK-LABEL: static int model_part2(char *const arena, rung_heap *const heap_io, float *const x, const int64_t x_d0, bool *const c, float *restrict const h, const int64_t h_d0, bool *const ok_out) {
// CHECK:         float *const a = (float *)(arena + 0);
// CHECK:         h[i1 * 8 + j2] = p;
// CHECK:         bool ok = c[0];
// CHECK-NEXT:    if (!ok) RUNG_FAIL("the flag is off");
// CHECK-NEXT:    *ok_out = ok;
// CHECK-NEXT:  done: RUNG_UNUSED;

// CHECK-LABEL: static int model_part3(char *const arena, rung_heap *const heap_io, float *const x, const int64_t x_d0, float *restrict const h, const int64_t h_d0, const bool ok, float **const sel_out, int64_t *const sel_d0_out) {
// CHECK:         *sel_out = sel;
// CHECK-NEXT:    *sel_d0_out = sel_d0;

// `sel` may be `h`: neither is restrict.
// CHECK-LABEL: static int model_part4(char *const arena, rung_heap *const heap_io, float *const h, const int64_t h_d0, float *const sel, const int64_t sel_d0) {
// CHECK-NEXT:    rung_heap heap = *heap_io;
// CHECK-NEXT:    int rc = 0;
// CHECK-NEXT:    float *const a = (float *)(arena + 0);
// CHECK-NEXT:    float *const o = (float *)(arena + 64);
// CHECK-NEXT:    float *const w = (float *)a;
// CHECK-NEXT:    for (int64_t k = 0; k < 4; k++) {
// CHECK:         rung_heap_free(&heap, h);
// CHECK-NEXT:  done: RUNG_UNUSED;

// CHECK-LABEL: int model_run(
// CHECK:         float *const x = (float *)inputs[0].data;
// CHECK-NEXT:    const int64_t x_d0 = inputs[0].shape[0];
// CHECK-NEXT:    bool *const c = (bool *)inputs[1].data;
// CHECK-NEXT:    float *h = 0;
// CHECK-NEXT:    int64_t h_d0 = 0;
// CHECK-NEXT:    if ((rc = model_part1(arena, &heap, x, x_d0, &h, &h_d0)) != 0) goto done;
// CHECK-NEXT:    bool ok = 0;
// CHECK-NEXT:    if ((rc = model_part2(arena, &heap, x, x_d0, c, h, h_d0, &ok)) != 0) goto done;
// CHECK-NEXT:    float *sel = 0;
// CHECK-NEXT:    int64_t sel_d0 = 0;
// CHECK-NEXT:    if ((rc = model_part3(arena, &heap, x, x_d0, h, h_d0, ok, &sel, &sel_d0)) != 0) goto done;
// CHECK-NEXT:    if ((rc = model_part4(arena, &heap, h, h_d0, sel, sel_d0)) != 0) goto done;
// CHECK-NEXT:    float *const o = (float *)(arena + 64);
// CHECK-NEXT:    outputs[0].dtype = 1;
// CHECK:       done:
// CHECK-NEXT:    rung_heap_release(&heap);

// WHOLE-NOT:   static int
// WHOLE:       int model_run(
// WHOLE:         float *const a = (float *)(arena + 0);
// WHOLE-NEXT:    for (int64_t j = 0; j < 8; j++) {
// WHOLE:         if (!ok) RUNG_FAIL("the flag is off");
// WHOLE:         rung_heap_free(&heap, h);
// WHOLE-NEXT:    outputs[0].dtype = 1;
func.func @steps(%x: memref<?x8xf32>, %c: memref<1xi1>) -> memref<4xf32> attributes {kernel.arena_bytes = 128 : i64} {
  %n = kernel.dim %x[0] : memref<?x8xf32>
  %a = kernel.alloc() {offset = 0 : i64} : memref<8xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  kernel.loop (%j) in (8) [parallel] {
    %s = kernel.loop (%i) in (%n) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i, %j] : memref<?x8xf32>
      %t = arith.addf %acc, %v : f32
      kernel.yield %t : f32
    }
    kernel.store %s, %a[%j] : memref<8xf32>
    kernel.yield
  }
  %h = kernel.alloc(%n) : memref<?x8xf32>
  kernel.loop (%i, %j) in (%n, 8) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<?x8xf32>
    %s = kernel.load %a[%j] : memref<8xf32>
    %p = arith.mulf %v, %s : f32
    kernel.store %p, %h[%i, %j] : memref<?x8xf32>
    kernel.yield
  }
  %ok = kernel.load %c[%c0] : memref<1xi1>
  cf.assert %ok, "the flag is off"
  %sel = scf.if %ok -> (memref<?x8xf32>) {
    scf.yield %h : memref<?x8xf32>
  } else {
    scf.yield %x : memref<?x8xf32>
  }
  %o = kernel.alloc() {offset = 64 : i64} : memref<4xf32>
  %w = kernel.view %a() : memref<8xf32> -> memref<2x4xf32>
  kernel.loop (%k) in (4) [parallel] {
    %c1 = arith.constant 1 : index
    %l = kernel.load %w[%c0, %k] : memref<2x4xf32>
    %r = kernel.load %w[%c1, %k] : memref<2x4xf32>
    %e = kernel.load %sel[%c0, %k] : memref<?x8xf32>
    %g = kernel.load %h[%c0, %k] : memref<?x8xf32>
    %q = arith.addf %l, %r : f32
    %u = arith.addf %e, %g : f32
    %y = arith.addf %q, %u : f32
    kernel.store %y, %o[%k] : memref<4xf32>
    kernel.yield
  }
  kernel.dealloc %h : memref<?x8xf32>
  func.return %o : memref<4xf32>
}
