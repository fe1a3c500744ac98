//===- Kernel.h - the extension's Module and Kernel -------------*- C++ -*-===//
//
// What Extension.cpp (modules), Kernel.cpp (kernels, launchers, bound
// launches) and Autotune.cpp (kjit.autotune) share.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_PYTHON_KERNEL_H
#define KJIT_PYTHON_KERNEL_H

#include "Extension.h"

#include "absl/container/inlined_vector.h"

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

//===----------------------------------------------------------------------===//
// What Kernel.cpp's launch and Autotune.cpp's share
//===----------------------------------------------------------------------===//

/// The Python Kernel object.
struct KernelObject {
  PyObject_HEAD PyObject *module; // a ModuleObject
  std::string name;
  /// The kernel in each target's runtime, found on its first launch there.
  rt::Kernel *kernels[kNumTargets] = {};
  /// A copy of the kernel's manifest: valid after shutdown too.
  const rt::KernelManifest *manifest = nullptr;
  /// Callables run before every launch and warmup (a list, or null).
  PyObject *preRunHooks = nullptr;
  /// The last subscript: its grid object and the method it returned.
  PyObject *lastGrid = nullptr;
  PyObject *lastLauncher = nullptr;
};

KernelObject *asKernel(PyObject *object);

/// A grid: fixed, or a callable evaluated per launch.
struct GridSpec {
  rt::Grid fixed = {1, 1, 1};
  PyObject *callable = nullptr;
};

/// Reads a grid argument (a tuple of 1 to 3 ints, or a callable).
bool readGrid(PyObject *object, GridSpec &grid);
/// The grid of a launch with these arguments (a callable is called with
/// the bound arguments' mapping).
bool evaluateGrid(const GridSpec &spec, const rt::KernelManifest &manifest,
                  PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  rt::Grid &grid);

/// A launch's arguments as the runtime takes them.
struct ReadArguments {
  absl::InlinedVector<rt::Argument, 16> positional;
  absl::InlinedVector<rt::KeywordArgument, 8> keywords;
  Placement placement;
  /// stream= when it was given (launch and bind take it).
  bool haveStream = false;
  uint64_t stream = 0;
};

/// Reads positional and keyword arguments; `takeStream`: a `stream`
/// keyword is the launch's stream, not an argument for the binder.
bool readArguments(KernelObject *kernel, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames, bool takeStream,
                   bool mock, ReadArguments &out, Py_ssize_t *streamKeyword);
/// The target and runtime kernel of a launch with `placement`'s tensors,
/// or null with an exception set.
rt::Kernel *placeLaunch(KernelObject *kernel, const Placement &placement,
                        Target &target);
/// After a runtime call: a hook's exception, the runtime's error, or a
/// Ctrl-C that arrived during a compile; None when all went well.
PyObject *finish(const absl::Status &status, bool compiled);

/// Autotune.cpp: Kernel's methods behind kjit.autotune.
PyObject *kernelAutotuner(PyObject *, PyObject *args);
PyObject *kernelAutotuneLaunch(PyObject *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames);
PyObject *kernelAutotuneBest(PyObject *, PyObject *capsule);

} // namespace kjit::python

#endif // KJIT_PYTHON_KERNEL_H
