// RUN: not opt %s --load-plugin %S/Inputs/broken_plugin.py 2>&1 | filecheck %s
// RUN: not opt %s --load-plugin %S/Inputs/no_register_plugin.py 2>&1 | filecheck %s --check-prefix=NOREG
// RUN: not opt %s --load-plugin %S/Inputs/no_such_plugin.py 2>&1 | filecheck %s --check-prefix=MISSING

// A plugin that cannot be loaded stops opt with one line naming the plugin
// and the reason (with the plugin's line, when it raised), and exit code 1.

func.func @f() {
  func.return
}

// CHECK:      opt: error: cannot load plugin '{{.*}}broken_plugin.py': RuntimeError: this plugin is broken on purpose (line 3)
// CHECK-NOT:  Traceback
// NOREG:      opt: error: cannot load plugin '{{.*}}no_register_plugin.py': it defines no function 'register(registry)'
// MISSING:    opt: error: cannot load plugin '{{.*}}no_such_plugin.py': no such file
