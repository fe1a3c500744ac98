//===- Extension.h - what the parts of the kjit extension share -*- C++ -*-===//
//
// The `kjit._kjit` CPython extension (docs/Python.md): a module built
// against the limited API of Python 3.10 (one abi3 binary for every Python
// from 3.10 on) over the C++ runtime. Values.cpp reads Python objects as
// launch values, Hooks.cpp is the plugin through which Python hooks see
// compiles and launches, Extension.cpp has the module and its types.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_PYTHON_EXTENSION_H
#define KJIT_PYTHON_EXTENSION_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kjit/Model/Argument.h"
#include "kjit/Runtime/Module.h"

#include "absl/status/status.h"

#include <cstdint>
#include <string>

namespace kjit::python {

/// Where a launch runs, decided by its tensors.
enum class Target : uint8_t { Host, Cuda };
inline constexpr int kNumTargets = 2;
const char *targetName(Target target);

/// The runtime of `target`, created on first use (null with a Python
/// exception set when it cannot be).
rt::Runtime *runtimeFor(Target target);
/// The runtime of `target` if it was made already, else null.
rt::Runtime *existingRuntime(Target target);

/// The device every tensor of a launch is on, gathered while the
/// arguments are read.
struct Placement {
  bool any = false;
  Target target = Target::Host;
  int32_t device = 0;
  /// The framework's current stream of that device (DLPack exchange API),
  /// when a tensor read through it was on CUDA.
  bool haveStream = false;
  uint64_t stream = 0;
  /// For messages: the first tensor's parameter position.
  Py_ssize_t firstIndex = -1;
};

/// How a value is read: `mock` turns a dtype at a non-constexpr parameter
/// into a dtype-only tensor (warmup). `param` is the parameter's position
/// in the manifest, or -1 when unknown (a keyword naming an option).
struct ReadContext {
  const rt::KernelManifest *manifest = nullptr;
  bool mock = false;
  Placement *placement = nullptr;
};

/// Reads `object`, bound to parameter `param` (-1: none) called `name`, as
/// a launch value. False with a Python exception set when it is none.
bool readValue(PyObject *object, Py_ssize_t param, std::string_view name,
               const ReadContext &context, rt::Argument &out);

/// A Python object for a bound launch value (a grid callable's mapping
/// shows defaults this way). New reference, or null with an exception.
PyObject *valueToPython(const rt::Argument &value);

/// The stream handle a `stream=` value stands for: an int, or an object
/// with `cuda_stream` or `ptr` (CuPy). False with an exception set.
bool readStream(PyObject *object, uint64_t &stream);

/// Finds the driver's capture query (after the cuda runtime loaded it).
void findCaptureQuery();
/// Whether CUDA stream `stream` is capturing a graph (or another stream
/// captures in the global mode and this is the legacy stream); false when
/// the driver is not loaded.
bool streamIsCapturing(uint64_t stream);

/// Whether kjit has shut down (the interpreter is exiting: the runtimes and
/// their kernels are gone), and the exception saying so (returns null).
bool isShutDown();
PyObject *raiseShutDown();

/// Raises `status` as the matching Python exception; returns null.
PyObject *raiseStatus(const absl::Status &status);

/// Makes the heap type of `spec`, keeps it in `out` and adds it to
/// `module` as `name`; false with an exception set on failure.
bool addType(PyObject *module, const char *name, PyType_Spec &spec,
             PyTypeObject *&out);

/// The exception types (set at module init).
extern PyObject *ErrorType, *ArgumentErrorType, *CompileErrorType;
/// The dtype type of the module (kjit.float32 and friends are instances).
extern PyTypeObject *DTypeType;
/// The DType of an instance of DTypeType.
rt::DType dtypeOf(PyObject *object);

// Hooks (Hooks.cpp).
/// Sets the Python function that receives hook events from the runtime.
PyObject *setHookDispatcher(PyObject *, PyObject *dispatcher);
/// The extension's own file: the plugin the runtimes load for hooks.
const std::string &extensionPath();
/// Whether Python hooks are on (the plugin is loaded in every runtime).
bool hooksEnabled();
/// Loads the hook plugin into every runtime made so far and marks the
/// later ones to load it; false with an exception set on failure.
bool enableHooks();
/// An exception a hook raised on this thread during the runtime call that
/// just returned: restored as the current exception; true if there was one.
bool restorePendingException();
/// Keeps the current exception for restorePendingException (a hook or a
/// callback run inside the runtime, which cannot carry it).
void stashException();

} // namespace kjit::python

#endif // KJIT_PYTHON_EXTENSION_H
