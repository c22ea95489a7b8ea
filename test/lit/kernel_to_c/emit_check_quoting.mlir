// kernel.check quotes the bad value: an i64 with "%lld", an f64 with "%g"
// (`RUNG_FAIL_GOT_I64` / `_F64`); quotes in the message are escaped.
// RUN: opt %s -t c | filecheck %s
// CHECK:        if (!ok) RUNG_FAIL_GOT_I64("node 'g': Gather: an index is out of range", k);
// CHECK:        if (!ok) RUNG_FAIL_GOT_F64("node 'h': \"depth\"", d);
func.func @quoting(%c: memref<1xi1>, %n: memref<1xi64>, %f: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %ok = kernel.load %c[%c0] : memref<1xi1>
  %k = kernel.load %n[%c0] : memref<1xi64>
  kernel.check %ok, %k "node 'g': Gather: an index is out of range" : i64
  %d = kernel.load %f[%c0] : memref<1xf64>
  kernel.check %ok, %d "node 'h': \"depth\"" : f64
  func.return
}
