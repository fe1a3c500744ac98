//===- Kernel.h - the extension's Module and Kernel -------------*- C++ -*-===//
//
// What Extension.cpp (modules) and Kernel.cpp (kernels, launchers, bound
// launches) share.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_PYTHON_KERNEL_H
#define KJIT_PYTHON_KERNEL_H

#include "Extension.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kjit::python {

/// A kernel IR file, loaded into the runtime of each target it launches on
/// the first time it does (the analysis comes from the disk cache then).
struct ModuleState {
  std::string source;
  bool isText = false;
  std::string sourceName;
  /// Where launches with no tensor run; with targetFixed, every launch.
  Target defaultTarget = Target::Host;
  bool targetFixed = false;
  std::shared_ptr<rt::Module> modules[kNumTargets];
  /// Every set_global so far, replayed into a runtime that loads later.
  std::vector<std::pair<std::string, rt::Argument>> globals;

  /// The module in `target`'s runtime (loaded on first use), or null with
  /// an exception set.
  rt::Module *in(Target target);
};

/// The Python object: the C++ state is constructed in place after the
/// object header, never over it.
struct ModuleObject {
  PyObject_HEAD ModuleState state;
};

extern PyTypeObject *ModuleType;
ModuleState &asModule(PyObject *object);

/// Adds Kernel, the launcher and BoundLaunch to the module.
bool addKernelTypes(PyObject *module);

} // namespace kjit::python

#endif // KJIT_PYTHON_KERNEL_H
