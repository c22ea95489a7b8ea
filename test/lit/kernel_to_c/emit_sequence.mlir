// C generation of lists and optionals (rung_seq.h). A !kernel.list is a
// `const rung_sequence *`, a !kernel.optional a `const rung_tensor *` (NULL:
// none). Inputs are checked (a sequence's element dtypes; an optional is empty
// or fits) and bound to their slot; a buffer entering a list is copied onto
// the run's heap (rung_value_put), a new list shares its source's items (the
// caller's sequence is wrapped as a list of the run first, rung_seq_of_input); an
// element read is a view bound to its descriptor, whose rank and static dims
// are checked; outputs are packed, whatever they hold, into one block each.
// RUN: opt %s -t c | filecheck %s

// CHECK:      if (!rung_seq_fits(&inputs[0], 1)) return rung_error("input 0 ('s')", "must be a sequence of tensors of the expected type");
// CHECK:      if (inputs[3].dtype != RUNG_DTYPE_NONE && !rung_tensor_fits(&inputs[3], 7, 1, (const int64_t[]){2})) return rung_error("input 3 ('o')", "is neither an empty optional nor a value of the expected type");
// CHECK:      const rung_sequence *const s = rung_seq_of_input(&heap, (const rung_sequence *)inputs[0].data);
// CHECK-NEXT: if (!s) RUNG_FAIL("out of memory");
// CHECK:      const rung_tensor *const o = inputs[3].dtype == RUNG_DTYPE_NONE ? 0 : &inputs[3];
// CHECK:      int64_t n = s->count;
// CHECK-NEXT: const rung_tensor *const e_item = &s->items[i];
// CHECK-NEXT: if (e_item->rank != 1 || e_item->shape[0] != 3) RUNG_FAIL("a sequence element does not have the shape of memref<3xf32>");
// CHECK-NEXT: float *const e = (float *)e_item->data;
// CHECK-NEXT: rung_sequence *const m = rung_seq_insert(&heap, s, n);
// CHECK-NEXT: if (!m || rung_value_put(&heap, &m->items[n], x, 1, 2, (const int64_t[]){x_d0, 3}, (size_t)(x_d0 * 3) * sizeof(float))) RUNG_FAIL("out of memory");
// CHECK-NEXT: rung_sequence *const r = rung_seq_erase(&heap, m, i);
// CHECK-NEXT: if (!r) RUNG_FAIL("out of memory");
// CHECK-NEXT: rung_sequence *const p = rung_seq_new(&heap, 2);
// CHECK-NEXT: if (!p) RUNG_FAIL("out of memory");
// CHECK-NEXT: if (rung_value_put(&heap, &p->items[0], x, 1, 2, (const int64_t[]){x_d0, 3}, (size_t)(x_d0 * 3) * sizeof(float))) RUNG_FAIL("out of memory");
// CHECK-NEXT: if (rung_value_put(&heap, &p->items[1], e, 1, 1, (const int64_t[]){3}, (size_t)(3) * sizeof(float))) RUNG_FAIL("out of memory");
// CHECK-NEXT: rung_tensor *const w = rung_value_of_seq(&heap, p);
// CHECK-NEXT: if (!w) RUNG_FAIL("out of memory");
// CHECK-NEXT: bool h = o != 0;
// CHECK-NEXT: if (!h) RUNG_FAIL("empty");
// CHECK-NEXT: const rung_tensor *const v_item = o;
// CHECK-NEXT: int64_t *const v = (int64_t *)v_item->data;
// CHECK-NEXT: if (rung_pack_value(&(rung_tensor){(void *)r, RUNG_DTYPE_SEQUENCE, 0, {0}}, &outputs[0])) RUNG_FAIL("out of memory");
// CHECK:      const rung_tensor empty{{[0-9]*}} = {0, RUNG_DTYPE_NONE, 0, {0}};
// CHECK-NEXT: if (rung_pack_value(w ? w : &empty{{[0-9]*}}, &outputs[2])) RUNG_FAIL("out of memory");
// CHECK:      outputs[3].data = rung_copy_out(v, (size_t)(2) * sizeof(int64_t));
func.func @lists(%s: !kernel.list<f32>, %x: memref<?x3xf32>, %ib: memref<i64>, %o: !kernel.optional<memref<2xi64>>) -> (!kernel.list<f32>, memref<3xf32>, !kernel.optional<!kernel.list<f32>>, memref<2xi64>) {
  %i64 = kernel.load %ib[] : memref<i64>
  %i = arith.index_cast %i64 : i64 to index
  %n = kernel.list_length %s : !kernel.list<f32>
  %e = kernel.list_get %s[%i] : !kernel.list<f32> -> memref<3xf32>
  %m = kernel.list_insert %s, %x, %n : !kernel.list<f32>, memref<?x3xf32>
  %r = kernel.list_erase %m, %i : !kernel.list<f32>
  %p = kernel.list_new(%x, %e) : (memref<?x3xf32>, memref<3xf32>) -> !kernel.list<f32>
  %w = kernel.optional_new(%p) : !kernel.optional<!kernel.list<f32>>
  %h = kernel.optional_has %o : !kernel.optional<memref<2xi64>>
  cf.assert %h, "empty"
  %v = kernel.optional_get %o : !kernel.optional<memref<2xi64>>
  func.return %r, %e, %w, %v : !kernel.list<f32>, memref<3xf32>, !kernel.optional<!kernel.list<f32>>, memref<2xi64>
}
