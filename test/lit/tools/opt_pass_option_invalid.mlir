// RUN: not opt %s -p 'canonicalize{max-steps=3}' 2>&1 | filecheck %s
// RUN: not opt %s -p 'convert-memref-to-ptr{lower_func=maybe}' 2>&1 | filecheck %s --check-prefix=TYPE

// Options a pass does not have, or values of the wrong type, are reported
// with the pass they were given to.

func.func @f() {
  func.return
}

// CHECK:      opt: error: bad options for pass 'canonicalize{max-steps=3}': Provided arguments ["max_steps"] not found
// TYPE:       opt: error: bad options for pass 'convert-memref-to-ptr{lower_func="maybe"}': Incompatible types
