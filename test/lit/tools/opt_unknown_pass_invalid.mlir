// RUN: not opt %s -p canonicalise 2>&1 | filecheck %s
// RUN: not opt %s -p 'cse,no-such-pass' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not opt %s -p 'cse,,dce' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG

// A misspelt pass gets a suggestion; bad pipeline text gets a caret; an
// unknown flag is an error like any other (exit code 1, one line).

func.func @f() {
  func.return
}

// CHECK:      opt: error: unknown pass or pipeline 'canonicalise'; did you mean 'canonicalize'
// UNKNOWN:    opt: error: unknown pass or pipeline 'no-such-pass'
// SYNTAX:     opt: error: invalid pass pipeline 'cse,,dce':
// SYNTAX:     Expected pass name here
// FLAG:       opt: error: unrecognized arguments: --no-such-flag
