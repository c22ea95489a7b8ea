// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py | opt --load-plugin %S/Inputs/toy_plugin.py | filecheck %s
// RUN: opt %s --load-plugin %S/Inputs/toy_plugin.py --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: not opt %s 2>&1 | filecheck %s --check-prefix=NOPLUGIN

// A dialect from a plugin parses and prints, in its custom syntax and in the
// generic one; without the plugin its ops are unknown.

func.func @greet() {
  toy.hello "world"
  func.return
}

// CHECK:      func.func @greet() {
// CHECK-NEXT:   toy.hello "world"
// CHECK-NEXT:   func.return

// GENERIC:  "toy.hello"() <{greeting = "world"}> : () -> ()

// NOPLUGIN: opt: error: {{.*}}plugin_dialect.mlir:{{[0-9]+}}:{{[0-9]+}}: Operation toy.hello is not registered
