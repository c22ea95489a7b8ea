// The 8-, 6- and 4-bit floats are held one per byte and compute as float: a
// load decodes, each op rounds to the type, a store encodes. 2- and 4-bit
// integers are held one per byte (the low bits), sign-extended on load and
// wrapped to their width after each op.
// RUN: opt %s -t c | filecheck %s

// CHECK:      uint8_t *const x = (uint8_t *)inputs[0].data;
// CHECK-NEXT: int8_t *const q = (int8_t *)inputs[1].data;
// CHECK-NEXT: uint8_t *const u = (uint8_t *)inputs[2].data;
// CHECK:        float a = rung_f8e4m3fn_to_f32(x[i]);
// CHECK-NEXT:   float s = rung_round_f8e4m3fn(a * a);
// CHECK-NEXT:   float e = (float)s;
// CHECK-NEXT:   float t = rung_round_f8e5m2((float)e);
// CHECK-NEXT:   y[i] = rung_f32_to_f8e5m2(t);
// CHECK-NEXT:   int8_t b = rung_wrap_signed(q[i], 4);
// CHECK-NEXT:   int8_t c = rung_wrap_signed((int64_t)((int8_t)((uint8_t)b + (uint8_t)b)), 4);
// CHECK-NEXT:   r[i] = (int8_t)(c & 15);
// CHECK-NEXT:   uint8_t f = rung_wrap_unsigned((uint64_t)((int64_t)e), 2);
// CHECK-NEXT:   v[i] = f;
// CHECK:      outputs[0].dtype = 19;
func.func @narrow(%x: memref<4xf8E4M3FN>, %q: memref<4xi4>, %u: memref<4xui2>) -> (memref<4xf8E5M2>, memref<4xi4>, memref<4xui2>) {
  %y = kernel.alloc() : memref<4xf8E5M2>
  %r = kernel.alloc() : memref<4xi4>
  %v = kernel.alloc() : memref<4xui2>
  kernel.loop (%i) in (4) [parallel] {
    %a = kernel.load %x[%i] : memref<4xf8E4M3FN>
    %s = arith.mulf %a, %a : f8E4M3FN
    %e = arith.extf %s : f8E4M3FN to f32
    %t = arith.truncf %e : f32 to f8E5M2
    kernel.store %t, %y[%i] : memref<4xf8E5M2>
    %b = kernel.load %q[%i] : memref<4xi4>
    %c = arith.addi %b, %b : i4
    kernel.store %c, %r[%i] : memref<4xi4>
    %f = arith.fptoui %e : f32 to ui2
    kernel.store %f, %v[%i] : memref<4xui2>
    kernel.yield
  }
  func.return %y, %r, %v : memref<4xf8E5M2>, memref<4xi4>, memref<4xui2>
}
