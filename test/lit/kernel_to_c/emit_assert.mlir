// A cf.assert (a core.check, lowered) ends the run when its condition is false:
// `RUNG_FAIL` stores the message, which the caller reads from `<model>_last_error`,
// and leaves through the run's cleanup. Quotes and backslashes are escaped.
// RUN: opt %s -t c | filecheck %s

// CHECK:        bool ok = c[0];
// CHECK-NEXT:   if (!ok) RUNG_FAIL("node 'top_k': TopK: K is negative or larger than the size of axis 1");
// CHECK:        int64_t k = n[0];
// CHECK-NEXT:   bool le = k <= 4;
// CHECK-NEXT:   if (!le) RUNG_FAIL("say \"no\" \\ twice");
func.func @checks(%c: memref<1xi1>, %n: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %ok = kernel.load %c[%c0] : memref<1xi1>
  cf.assert %ok, "node 'top_k': TopK: K is negative or larger than the size of axis 1"
  %k = kernel.load %n[%c0] : memref<1xi64>
  %four = arith.constant 4 : i64
  %le = arith.cmpi sle, %k, %four : i64
  cf.assert %le, "say \"no\" \\ twice"
  func.return
}
