//===- Autotune.cpp - the native half of kjit.autotune --------------------===//
//
// Kernel._autotuner makes the state of one kjit.autotune (python/kjit/
// _autotune.py): the configurations, the key, and the runtime's
// rt::Autotuner of each target, made at the first launch there;
// Kernel._autotune_launch reads a launch's arguments as kernel[grid] does and
// launches through it with the GIL released (docs/Autotuning.md).
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "kjit/Runtime/Autotuner.h"
#include "kjit/Runtime/Runtime.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kjit::python {
namespace {

/// What kjit.autotune keeps in a capsule: the configurations and key, the
/// runtime's autotuner of each target (made at the first launch there) and
/// the Python callables run before each batch of trials and after them
/// (reset_to_zero, restore_value).
struct TunerState {
  rt::AutotuneSpec spec;
  std::unique_ptr<rt::Autotuner> tuners[kNumTargets];
  PyObject *before = nullptr, *after = nullptr;
  /// prune_configs_by, as one callable of no arguments returning the
  /// indices of the configurations to keep (the Python side reads the
  /// call's arguments itself).
  PyObject *prune = nullptr;
  /// With the GIL held (a capsule's destructor, or the failed creation).
  ~TunerState() {
    Py_XDECREF(before);
    Py_XDECREF(after);
    Py_XDECREF(prune);
  }
};

constexpr const char *kTunerCapsule = "kjit._kjit.Autotuner";

void tunerCapsuleDestroy(PyObject *capsule) {
  auto *state =
      static_cast<TunerState *>(PyCapsule_GetPointer(capsule, kTunerCapsule));
  delete state;
}

/// A trial callback: calls `function` with the GIL (the tuning released
/// it); its exception is kept for the launch to raise.
std::function<absl::Status()> pythonCallback(PyObject *function) {
  if (!function)
    return nullptr;
  return [function]() -> absl::Status {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result = PyObject_CallNoArgs(function);
    absl::Status status;
    if (!result) {
      stashException();
      status = absl::CancelledError("a trial callback raised");
    }
    Py_XDECREF(result);
    PyGILState_Release(gil);
    return status;
  };
}

/// The prune function: calls `function` with the GIL; it returns a list
/// of configuration indices. Its exception is kept for the launch to raise.
auto pythonPrune(PyObject *function) {
  return
      [function](
          const std::vector<rt::TuningConfig> &,
          const rt::NamedArguments &) -> absl::StatusOr<std::vector<size_t>> {
        PyGILState_STATE gil = PyGILState_Ensure();
        absl::StatusOr<std::vector<size_t>> kept = std::vector<size_t>();
        PyObject *result = PyObject_CallNoArgs(function);
        if (result && PyList_Check(result)) {
          for (Py_ssize_t i = 0; i < PyList_Size(result) && kept.ok(); ++i) {
            size_t index = PyLong_AsSize_t(PyList_GetItem(result, i));
            if (index == size_t(-1) && PyErr_Occurred()) {
              PyErr_Clear();
              kept = absl::InvalidArgumentError(
                  "it returned a list of other than configuration indices");
            } else {
              kept->push_back(index);
            }
          }
        } else if (result) {
          kept = absl::InvalidArgumentError("it returned no list");
        } else {
          stashException();
          kept = absl::CancelledError("it raised");
        }
        Py_XDECREF(result);
        PyGILState_Release(gil);
        return kept;
      };
}

} // namespace

/// _autotuner(configs, key, before, after, prune) -> capsule: configs a
/// list of dicts of int, float or bool values; before, after and prune
/// callables or None.
PyObject *kernelAutotuner(PyObject *, PyObject *args) {
  PyObject *configs, *key, *before, *after, *prune = Py_None;
  if (!PyArg_ParseTuple(args, "O!O!OO|O", &PyList_Type, &configs, &PyList_Type,
                        &key, &before, &after, &prune))
    return nullptr;
  auto state = std::make_unique<TunerState>();
  for (Py_ssize_t i = 0; i < PyList_Size(configs); ++i) {
    PyObject *config = PyList_GetItem(configs, i);
    if (!PyDict_Check(config)) {
      PyErr_Format(ArgumentErrorType, "autotune config %zd is not a dict", i);
      return nullptr;
    }
    rt::TuningConfig tuning;
    PyObject *name, *value;
    Py_ssize_t at = 0;
    while (PyDict_Next(config, &at, &name, &value)) {
      const char *text = PyUnicode_Check(name)
                             ? PyUnicode_AsUTF8AndSize(name, nullptr)
                             : nullptr;
      if (!text) {
        PyErr_Format(ArgumentErrorType,
                     "autotune config %zd: names are strings", i);
        return nullptr;
      }
      rt::Argument argument;
      if (PyBool_Check(value)) {
        argument = rt::Argument::boolean(value == Py_True);
      } else if (PyLong_Check(value)) {
        long long number = PyLong_AsLongLong(value);
        if (number == -1 && PyErr_Occurred())
          return nullptr;
        argument = rt::Argument::integer(number);
      } else if (PyFloat_Check(value)) {
        argument = rt::Argument::fp(PyFloat_AsDouble(value));
      } else {
        PyErr_Format(ArgumentErrorType,
                     "autotune config %zd: %s is %R; a value is an int, a "
                     "float or a bool",
                     i, text, value);
        return nullptr;
      }
      tuning.values.emplace_back(text, argument);
    }
    state->spec.configs.push_back(std::move(tuning));
  }
  for (Py_ssize_t i = 0; i < PyList_Size(key); ++i) {
    const char *text =
        PyUnicode_Check(PyList_GetItem(key, i))
            ? PyUnicode_AsUTF8AndSize(PyList_GetItem(key, i), nullptr)
            : nullptr;
    if (!text) {
      PyErr_SetString(ArgumentErrorType, "autotune key: names are strings");
      return nullptr;
    }
    state->spec.key.push_back(text);
  }
  for (auto [callable, slot] :
       {std::pair{before, &state->before}, std::pair{after, &state->after},
        std::pair{prune, &state->prune}})
    if (callable != Py_None) {
      Py_INCREF(callable);
      *slot = callable;
    }
  state->spec.beforeTrials = pythonCallback(state->before);
  state->spec.afterTrials = pythonCallback(state->after);
  if (state->prune)
    state->spec.prune = pythonPrune(state->prune);
  // The capsule owns the state from here, or nothing does if it failed.
  TunerState *owned = state.release();
  PyObject *capsule = PyCapsule_New(owned, kTunerCapsule, tunerCapsuleDestroy);
  if (!capsule)
    delete owned;
  return capsule;
}

/// _autotune_launch(capsule, grid, *args, **kwargs): the launch of
/// kernel[grid](*args, **kwargs) with the configuration chosen for the
/// arguments' key, tuned first when there is none.
PyObject *kernelAutotuneLaunch(PyObject *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError,
                    "_autotune_launch(tuner, grid, *args, **kwargs)");
    return nullptr;
  }
  auto *state =
      static_cast<TunerState *>(PyCapsule_GetPointer(args[0], kTunerCapsule));
  if (!state)
    return nullptr;
  KernelObject *kernel = asKernel(self);
  GridSpec grid;
  if (!readGrid(args[1], grid))
    return nullptr;
  Py_ssize_t streamKeyword = -1;
  ReadArguments read;
  if (!readArguments(kernel, args + 2, nargs - 2, kwnames, true, false, read,
                     &streamKeyword))
    return nullptr;
  Target target;
  rt::Kernel *runtimeKernel = placeLaunch(kernel, read.placement, target);
  if (!runtimeKernel)
    return nullptr;
  std::unique_ptr<rt::Autotuner> &tuner =
      state->tuners[static_cast<int>(target)];
  if (!tuner) {
    absl::StatusOr<std::unique_ptr<rt::Autotuner>> created =
        rt::Autotuner::create(*existingRuntime(target), *runtimeKernel,
                              state->spec);
    if (!created.ok()) {
      PyErr_SetString(ArgumentErrorType,
                      std::string(created.status().message()).c_str());
      return nullptr;
    }
    tuner = *std::move(created);
  }
  rt::LaunchConfig config;
  if (!evaluateGrid(grid, *kernel->manifest, args + 2, nargs - 2, kwnames,
                    config.grid))
    return nullptr;
  config.device = read.placement.device;
  config.stream = read.haveStream ? read.stream : read.placement.stream;
  PyThreadState *thread = PyEval_SaveThread();
  config.mayLoad = target != Target::Cuda || !streamIsCapturing(config.stream);
  absl::StatusOr<rt::LaunchResult> result =
      tuner->launch(config, read.positional, read.keywords);
  PyEval_RestoreThread(thread);
  return finish(result.status(), result.ok() && result->compiled);
}

/// _autotune_best(capsule) -> the index of the configuration the last
/// launch used, or None.
PyObject *kernelAutotuneBest(PyObject *, PyObject *capsule) {
  auto *state =
      static_cast<TunerState *>(PyCapsule_GetPointer(capsule, kTunerCapsule));
  if (!state)
    return nullptr;
  for (const std::unique_ptr<rt::Autotuner> &tuner : state->tuners)
    if (tuner && tuner->lastChosen())
      return PyLong_FromSsize_t(tuner->lastChosen() - tuner->configs().data());
  Py_RETURN_NONE;
}

} // namespace kjit::python
