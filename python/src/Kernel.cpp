//===- Kernel.cpp - kernels, launches and bound launches ------------------===//
//
// `kernel[grid](...)` is a builtin method bound to a launcher (kernel and
// grid), so that a launch is one vectorcall of a METH_FASTCALL function:
// no argument tuple or dict is built. The last subscript's launcher is kept
// on the kernel, so a loop's `k[(n,)](...)` with a constant grid makes no
// object either. The launch reads each argument (Values.cpp), picks the
// runtime of the tensors' target, releases the GIL and calls
// rt::Kernel::launch, whose replay of a thread's last launch is the hit
// path (docs/Dispatch.md).
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Runtime/Runtime.h"

#include "absl/container/inlined_vector.h"
#include "kjit/Support/StrCat.h"

#include <new>
#include <string>
#include <vector>

namespace kjit::python {
namespace {
PyTypeObject *KernelType, *LauncherType, *BoundType;
} // namespace

KernelObject *asKernel(PyObject *object) {
  return reinterpret_cast<KernelObject *>(object);
}

static rt::Kernel *kernelIn(KernelObject *kernel, Target target) {
  if (ABSL_PREDICT_FALSE(isShutDown())) {
    raiseShutDown();
    return nullptr;
  }
  rt::Kernel *&slot = kernel->kernels[static_cast<int>(target)];
  if (slot)
    return slot;
  rt::Module *module = asModule(kernel->module).in(target);
  if (!module)
    return nullptr;
  absl::StatusOr<rt::Kernel *> found = module->kernel(kernel->name);
  if (!found.ok()) {
    raiseStatus(found.status());
    return nullptr;
  }
  slot = *found;
  return slot;
}

static bool parseGrid(PyObject *object, rt::Grid &grid) {
  if (PyLong_Check(object)) {
    PyErr_SetString(PyExc_TypeError,
                    "a grid is a tuple of 1 to 3 ints or a callable "
                    "returning one; got an int (write (n,))");
    return false;
  }
  if (!PyTuple_Check(object) && !PyList_Check(object)) {
    PyErr_SetString(PyExc_TypeError,
                    "a grid is a tuple of 1 to 3 ints or a callable "
                    "returning one");
    return false;
  }
  PyObject *sequence = PySequence_Tuple(object);
  if (!sequence)
    return false;
  Py_ssize_t size = PyTuple_Size(sequence);
  bool ok = size >= 1 && size <= 3;
  if (!ok)
    PyErr_Format(PyExc_TypeError, "a grid has 1 to 3 dimensions, got %zd",
                 size);
  grid = {1, 1, 1};
  for (Py_ssize_t i = 0; ok && i < size; ++i) {
    // Anything with __index__: a NumPy integer from a grid callable too.
    PyObject *extent = PyNumber_Index(PyTuple_GetItem(sequence, i));
    long long value = extent ? PyLong_AsLongLong(extent) : -1;
    Py_XDECREF(extent);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      value = -1;
    }
    if (value < 0 || value > UINT32_MAX) {
      PyErr_Format(PyExc_ValueError,
                   "grid dimension %zd must be an int from 0 to 2^32-1", i);
      ok = false;
    } else {
      grid[i] = static_cast<uint32_t>(value);
    }
  }
  Py_DECREF(sequence);
  return ok;
}

/// A grid argument: a callable (evaluated per launch) or 1 to 3 extents.
bool readGrid(PyObject *object, GridSpec &grid) {
  if (PyCallable_Check(object)) {
    grid.callable = object;
    return true;
  }
  return parseGrid(object, grid.fixed);
}

/// The mapping a grid callable is given: every parameter's value as the
/// caller passed it, and the defaults of those not passed.
static PyObject *gridMapping(const rt::KernelManifest &manifest,
                             PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PyObject *mapping = PyDict_New();
  if (!mapping)
    return nullptr;
  Py_ssize_t numKeywords = kwnames ? PyTuple_Size(kwnames) : 0;
  for (size_t j = 0; j < manifest.params.size(); ++j) {
    const rt::KernelParam &param = manifest.params[j];
    PyObject *value = nullptr;
    if ((Py_ssize_t)j < nargs) {
      value = args[j];
      Py_INCREF(value);
    }
    for (Py_ssize_t k = 0; !value && k < numKeywords; ++k)
      if (PyUnicode_CompareWithASCIIString(PyTuple_GetItem(kwnames, k),
                                           param.name.c_str()) == 0) {
        value = args[nargs + k];
        Py_INCREF(value);
      }
    if (!value && param.defaultValue)
      value = valueToPython(*param.defaultValue);
    if (!value) {
      if (PyErr_Occurred()) {
        Py_DECREF(mapping);
        return nullptr;
      }
      continue; // missing: the binder names it
    }
    int set = PyDict_SetItemString(mapping, param.name.c_str(), value);
    Py_DECREF(value);
    if (set < 0) {
      Py_DECREF(mapping);
      return nullptr;
    }
  }
  return mapping;
}

bool evaluateGrid(const GridSpec &spec, const rt::KernelManifest &manifest,
                  PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  rt::Grid &grid) {
  if (!spec.callable) {
    grid = spec.fixed;
    return true;
  }
  PyObject *mapping = gridMapping(manifest, args, nargs, kwnames);
  if (!mapping)
    return false;
  PyObject *result =
      PyObject_CallFunctionObjArgs(spec.callable, mapping, nullptr);
  Py_DECREF(mapping);
  if (!result)
    return false;
  bool ok = parseGrid(result, grid);
  Py_DECREF(result);
  return ok;
}

static bool runPreRunHooks(KernelObject *kernel, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames,
                           Py_ssize_t skipKeyword) {
  if (!kernel->preRunHooks || PyList_Size(kernel->preRunHooks) == 0)
    return true;
  PyObject *positional = PyTuple_New(nargs);
  PyObject *keywords = PyDict_New();
  bool ok = positional && keywords;
  for (Py_ssize_t i = 0; ok && i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SetItem(positional, i, args[i]);
  }
  Py_ssize_t numKeywords = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = 0; ok && k < numKeywords; ++k)
    if (k != skipKeyword)
      ok = PyDict_SetItem(keywords, PyTuple_GetItem(kwnames, k),
                          args[nargs + k]) == 0;
  // A copy: a hook that adds or removes hooks changes the next launch.
  PyObject *hooks = ok ? PySequence_List(kernel->preRunHooks) : nullptr;
  for (Py_ssize_t h = 0; hooks && h < PyList_Size(hooks); ++h) {
    PyObject *result =
        PyObject_Call(PyList_GetItem(hooks, h), positional, keywords);
    if (!result) {
      ok = false;
      break;
    }
    Py_DECREF(result);
  }
  ok = ok && hooks;
  Py_XDECREF(hooks);
  Py_XDECREF(positional);
  Py_XDECREF(keywords);
  return ok;
}

/// A launch's arguments as the runtime takes them.
/// Reads positional and keyword arguments; `takeStream`: a `stream`
/// keyword is the launch's stream, not an argument for the binder.
bool readArguments(KernelObject *kernel, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames, bool takeStream,
                   bool mock, ReadArguments &out, Py_ssize_t *streamKeyword) {
  const rt::KernelManifest &manifest = *kernel->manifest;
  ReadContext context{&manifest, mock, &out.placement};
  out.positional.resize(nargs);
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    std::string_view name = (size_t)i < manifest.params.size()
                                ? std::string_view(manifest.params[i].name)
                                : std::string_view("<extra>");
    if (!readValue(args[i], i, name, context, out.positional[i]))
      return false;
  }
  Py_ssize_t numKeywords = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = 0; k < numKeywords; ++k) {
    Py_ssize_t size = 0;
    const char *name =
        PyUnicode_AsUTF8AndSize(PyTuple_GetItem(kwnames, k), &size);
    if (!name)
      return false;
    std::string_view keyword(name, size);
    if (takeStream && keyword == "stream") {
      if (streamKeyword)
        *streamKeyword = k;
      if (args[nargs + k] == Py_None)
        continue;
      if (!readStream(args[nargs + k], out.stream))
        return false;
      out.haveStream = true;
      continue;
    }
    Py_ssize_t param = -1;
    if (mock)
      for (size_t j = 0; j < manifest.params.size(); ++j)
        if (manifest.params[j].name == keyword)
          param = (Py_ssize_t)j;
    rt::Argument value;
    if (!readValue(args[nargs + k], param, keyword, context, value))
      return false;
    out.keywords.push_back({keyword, value});
  }
  return true;
}

/// The target and runtime kernel of a launch with `read`'s tensors.
rt::Kernel *placeLaunch(KernelObject *kernel, const Placement &placement,
                        Target &target) {
  ModuleState *module = &asModule(kernel->module);
  target = placement.any ? placement.target : module->defaultTarget;
  if (module->targetFixed && target != module->defaultTarget) {
    PyErr_Format(ArgumentErrorType,
                 "Pointer argument %s (at %zd) cannot be accessed from %s "
                 "(%s tensor?): this module launches on %s",
                 kernel->manifest->params[placement.firstIndex].name.c_str(),
                 placement.firstIndex, targetName(module->defaultTarget),
                 target == Target::Host ? "cpu" : "cuda",
                 targetName(module->defaultTarget));
    return nullptr;
  }
  return kernelIn(kernel, target);
}

/// After a runtime call: a hook's exception, the runtime's error, or a
/// Ctrl-C that arrived during a compile.
PyObject *finish(const absl::Status &status, bool compiled) {
  if (restorePendingException())
    return nullptr;
  if (!status.ok())
    return raiseStatus(status);
  if (compiled && PyErr_CheckSignals() < 0)
    return nullptr;
  Py_RETURN_NONE;
}

namespace {

/// Runs `kernel`'s launch. A launch first tries the loaded specializations
/// alone (mayLoad false: no hook of the compile, no compile, no wait for
/// another thread's); only one that would load asks whether its CUDA
/// stream is capturing a graph, where loading is refused, so the capture
/// query stays off the hit path. That first try of a CUDA launch only
/// enqueues work and keeps the GIL, as PyTorch's own operators do; a launch
/// that may compile or wait, and every host launch (which runs the
/// kernel), releases it. With a plugin's pre-run hooks (which would run
/// twice) a CUDA launch asks the capture query first instead.
absl::StatusOr<rt::LaunchResult>
launchReleased(rt::Kernel &kernel, Target target, rt::LaunchConfig &config,
               absl::Span<const rt::Argument> positional,
               absl::Span<const rt::KeywordArgument> keywords) {
  absl::StatusOr<rt::LaunchResult> result;
  if (ABSL_PREDICT_TRUE(target == Target::Cuda &&
                        !existingRuntime(target)->plugins().hasPreRunHooks())) {
    config.mayLoad = false;
    result = kernel.launch(config, positional, keywords);
    if (ABSL_PREDICT_TRUE(result.status().code() !=
                          absl::StatusCode::kUnavailable))
      return result;
  }
  PyThreadState *thread = PyEval_SaveThread();
  // Nothing captures on the host.
  config.mayLoad = target != Target::Cuda || !streamIsCapturing(config.stream);
  result = kernel.launch(config, positional, keywords);
  PyEval_RestoreThread(thread);
  if (ABSL_PREDICT_FALSE(!config.mayLoad && target == Target::Cuda &&
                         result.status().code() ==
                             absl::StatusCode::kUnavailable))
    return absl::FailedPreconditionError(kjit::strCat(
        "kernel '", kernel.manifest().name,
        "': this launch would compile or load its specialization, but CUDA "
        "stream ",
        absl::Hex(config.stream),
        " is capturing a graph, which loading a module would break: warm up "
        "first (launch it, or kernel.warmup(...), once with these argument "
        "types before the capture)"));
  return result;
}

PyObject *launch(KernelObject *kernel, const GridSpec &grid,
                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                 bool takeStream) {
  Py_ssize_t streamKeyword = -1;
  ReadArguments read;
  if (!readArguments(kernel, args, nargs, kwnames, takeStream, false, read,
                     &streamKeyword))
    return nullptr;
  if (kernel->preRunHooks &&
      !runPreRunHooks(kernel, args, nargs, kwnames, streamKeyword))
    return nullptr;
  Target target;
  rt::Kernel *runtimeKernel = placeLaunch(kernel, read.placement, target);
  if (!runtimeKernel)
    return nullptr;
  rt::LaunchConfig config;
  if (!evaluateGrid(grid, *kernel->manifest, args, nargs, kwnames, config.grid))
    return nullptr;
  config.device = read.placement.device;
  config.stream = read.haveStream ? read.stream : read.placement.stream;
  absl::StatusOr<rt::LaunchResult> result = launchReleased(
      *runtimeKernel, target, config, read.positional, read.keywords);
  return finish(result.status(), result.ok() && result->compiled);
}

//===----------------------------------------------------------------------===//
// Launcher: what kernel[grid] returns, bound into a builtin method
//===----------------------------------------------------------------------===//

struct LauncherObject {
  PyObject_HEAD PyObject *kernel;
  PyObject *gridObject;
  GridSpec grid;
};

PyObject *launcherCall(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames) {
  auto *launcher = reinterpret_cast<LauncherObject *>(self);
  return launch(asKernel(launcher->kernel), launcher->grid, args, nargs,
                kwnames, /*takeStream=*/false);
}

PyMethodDef launcherMethod = {
    "launch", (PyCFunction)(void (*)(void))launcherCall,
    METH_FASTCALL | METH_KEYWORDS,
    "Launches the kernel on this grid: arguments by position or name, launch "
    "options as keywords, on the tensors' current stream."};

int launcherTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *launcher = reinterpret_cast<LauncherObject *>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(launcher->kernel);
  Py_VISIT(launcher->gridObject);
  return 0;
}

int launcherClear(PyObject *self) {
  auto *launcher = reinterpret_cast<LauncherObject *>(self);
  Py_CLEAR(launcher->kernel);
  Py_CLEAR(launcher->gridObject);
  launcher->grid.callable = nullptr;
  return 0;
}

void genericDealloc(PyObject *self, inquiry clear) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  clear(self);
  auto free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

void launcherDealloc(PyObject *self) { genericDealloc(self, launcherClear); }

PyType_Slot launcherSlots[] = {{Py_tp_dealloc, (void *)launcherDealloc},
                               {Py_tp_traverse, (void *)launcherTraverse},
                               {Py_tp_clear, (void *)launcherClear},
                               {0, nullptr}};
PyType_Spec launcherSpec = {"kjit._kjit.Launcher", sizeof(LauncherObject), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
                            launcherSlots};

PyObject *kernelSubscript(PyObject *self, PyObject *gridObject) {
  KernelObject *kernel = asKernel(self);
  if (gridObject == kernel->lastGrid) {
    Py_INCREF(kernel->lastLauncher);
    return kernel->lastLauncher;
  }
  GridSpec grid;
  if (!readGrid(gridObject, grid))
    return nullptr;
  PyObject *object = PyType_GenericAlloc(LauncherType, 0);
  if (!object)
    return nullptr;
  auto *launcher = reinterpret_cast<LauncherObject *>(object);
  Py_INCREF(self);
  Py_INCREF(gridObject);
  launcher->kernel = self;
  launcher->gridObject = gridObject;
  launcher->grid = grid;
  PyObject *method = PyCFunction_New(&launcherMethod, object);
  Py_DECREF(object);
  if (!method)
    return nullptr;
  // Kept only for a grid that cannot change under it (a tuple is immutable;
  // a list or a callable is kept by identity too, and a callable is
  // called anew every launch).
  if (!PyList_Check(gridObject)) {
    Py_INCREF(gridObject);
    Py_INCREF(method);
    PyObject *oldGrid = kernel->lastGrid, *oldLauncher = kernel->lastLauncher;
    kernel->lastGrid = gridObject;
    kernel->lastLauncher = method;
    Py_XDECREF(oldGrid);
    Py_XDECREF(oldLauncher);
  }
  return method;
}

//===----------------------------------------------------------------------===//
// Kernel methods
//===----------------------------------------------------------------------===//

PyObject *kernelLaunch(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames) {
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError,
                    "launch(grid, *args, stream=None, **kwargs) needs a grid");
    return nullptr;
  }
  GridSpec grid;
  if (!readGrid(args[0], grid))
    return nullptr;
  return launch(asKernel(self), grid, args + 1, nargs - 1, kwnames, true);
}

/// warmup(*args, grid=None, **kwargs): the record as JSON text.
PyObject *kernelWarmup(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames) {
  KernelObject *kernel = asKernel(self);
  // grid= is accepted (and unused: nothing is launched), as in Triton.
  PyObject *keptNames = nullptr;
  absl::InlinedVector<PyObject *, 24> values(args, args + nargs);
  Py_ssize_t numKeywords = kwnames ? PyTuple_Size(kwnames) : 0;
  if (numKeywords) {
    keptNames = PyList_New(0);
    if (!keptNames)
      return nullptr;
    for (Py_ssize_t k = 0; k < numKeywords; ++k) {
      PyObject *name = PyTuple_GetItem(kwnames, k);
      if (PyUnicode_CompareWithASCIIString(name, "grid") == 0)
        continue;
      PyList_Append(keptNames, name);
      values.push_back(args[nargs + k]);
    }
  }
  PyObject *names = keptNames ? PyList_AsTuple(keptNames) : nullptr;
  Py_XDECREF(keptNames);
  if (numKeywords && !names)
    return nullptr;
  ReadArguments read;
  bool ok = readArguments(kernel, values.data(), nargs, names, false, true,
                          read, nullptr) &&
            (!kernel->preRunHooks ||
             runPreRunHooks(kernel, values.data(), nargs, names, -1));
  Target target;
  rt::Kernel *runtimeKernel =
      ok ? placeLaunch(kernel, read.placement, target) : nullptr;
  if (!runtimeKernel) {
    Py_XDECREF(names);
    return nullptr;
  }
  absl::StatusOr<rt::SpecializationRecord> record;
  PyThreadState *thread = PyEval_SaveThread();
  record = runtimeKernel->warmup(read.positional, read.keywords,
                                 read.placement.device);
  PyEval_RestoreThread(thread);
  Py_XDECREF(names);
  PyObject *done = finish(record.status(), record.ok());
  if (!done)
    return nullptr;
  Py_DECREF(done);
  std::string json = rt::toJson(*record);
  return PyUnicode_FromStringAndSize(json.data(), json.size());
}

/// preload(record_json, device=0)
PyObject *kernelPreload(PyObject *self, PyObject *args, PyObject *kwargs) {
  const char *json = nullptr;
  Py_ssize_t size = 0;
  int device = 0;
  static const char *keywords[] = {"record", "device", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s#|i:preload",
                                   const_cast<char **>(keywords), &json, &size,
                                   &device))
    return nullptr;
  absl::StatusOr<rt::SpecializationRecord> record =
      rt::specializationFromJson({json, (size_t)size});
  if (!record.ok())
    return raiseStatus(record.status());
  KernelObject *kernel = asKernel(self);
  Target target = record->target == "cuda" ? Target::Cuda
                  : record->target.empty()
                      ? asModule(kernel->module).defaultTarget
                      : Target::Host;
  rt::Kernel *runtimeKernel = kernelIn(kernel, target);
  if (!runtimeKernel)
    return nullptr;
  absl::Status status;
  PyThreadState *thread = PyEval_SaveThread();
  status = runtimeKernel->preload({json, (size_t)size}, device);
  PyEval_RestoreThread(thread);
  return finish(status, true);
}

PyObject *kernelAddPreRunHook(PyObject *self, PyObject *hook) {
  if (!PyCallable_Check(hook)) {
    PyErr_SetString(PyExc_TypeError, "a pre-run hook must be callable");
    return nullptr;
  }
  KernelObject *kernel = asKernel(self);
  if (!kernel->preRunHooks && !(kernel->preRunHooks = PyList_New(0)))
    return nullptr;
  if (PyList_Append(kernel->preRunHooks, hook) < 0)
    return nullptr;
  Py_RETURN_NONE;
}

PyObject *kernelPreRunHooks(PyObject *self, void *) {
  KernelObject *kernel = asKernel(self);
  if (!kernel->preRunHooks && !(kernel->preRunHooks = PyList_New(0)))
    return nullptr;
  Py_INCREF(kernel->preRunHooks);
  return kernel->preRunHooks;
}

PyObject *kernelName(PyObject *self, void *) {
  return PyUnicode_FromString(asKernel(self)->name.c_str());
}

PyObject *kernelManifestJson(PyObject *self, void *) {
  std::string json = rt::manifestToJson(*asKernel(self)->manifest);
  return PyUnicode_FromStringAndSize(json.data(), json.size());
}

PyObject *kernelStats(PyObject *self, PyObject *) {
  PyObject *stats = PyDict_New();
  KernelObject *kernel = asKernel(self);
  for (int t = 0; stats && t < kNumTargets; ++t) {
    if (!kernel->kernels[t])
      continue;
    rt::KernelStats s = kernel->kernels[t]->stats();
    PyObject *entry = Py_BuildValue(
        "{s:K,s:K,s:K}", "compiles", (unsigned long long)s.compiles,
        "disk_hits", (unsigned long long)s.diskHits, "remote_hits",
        (unsigned long long)s.remoteHits);
    if (!entry || PyDict_SetItemString(
                      stats, targetName(static_cast<Target>(t)), entry) < 0) {
      Py_XDECREF(entry);
      Py_DECREF(stats);
      return nullptr;
    }
    Py_DECREF(entry);
  }
  return stats;
}

//===----------------------------------------------------------------------===//
// BoundLaunch
//===----------------------------------------------------------------------===//

struct BoundObject {
  PyObject_HEAD PyObject *kernel;
  /// The objects whose memory the launch reads, kept alive with it.
  PyObject *objects;
  rt::Kernel *runtimeKernel;
  Target target;
  std::vector<rt::Argument> positional;
  std::vector<std::string> names;
  std::vector<rt::KeywordArgument> keywords;
  rt::LaunchConfig config;
};

BoundObject *asBound(PyObject *object) {
  return reinterpret_cast<BoundObject *>(object);
}

extern PyMethodDef boundMethod;

PyObject *kernelBind(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames) {
  KernelObject *kernel = asKernel(self);
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError,
                    "bind(grid, *args, stream=None, **kwargs) needs a grid");
    return nullptr;
  }
  GridSpec grid;
  if (!readGrid(args[0], grid))
    return nullptr;
  ReadArguments read;
  if (!readArguments(kernel, args + 1, nargs - 1, kwnames, true, false, read,
                     nullptr))
    return nullptr;
  Target target;
  rt::Kernel *runtimeKernel = placeLaunch(kernel, read.placement, target);
  rt::Grid fixed;
  if (!runtimeKernel || !evaluateGrid(grid, *kernel->manifest, args + 1,
                                      nargs - 1, kwnames, fixed))
    return nullptr;
  // The binder's refusal now, not at the first call.
  if (absl::Status checked = runtimeKernel->checkArguments(
          read.positional, read.keywords, read.placement.device);
      !checked.ok())
    return raiseStatus(checked);
  PyObject *object = PyType_GenericAlloc(BoundType, 0);
  if (!object)
    return nullptr;
  BoundObject *bound = asBound(object);
  new (&bound->positional)
      std::vector<rt::Argument>(read.positional.begin(), read.positional.end());
  new (&bound->names) std::vector<std::string>();
  new (&bound->keywords) std::vector<rt::KeywordArgument>();
  new (&bound->config) rt::LaunchConfig();
  for (const rt::KeywordArgument &keyword : read.keywords)
    bound->names.emplace_back(keyword.name);
  for (size_t k = 0; k < read.keywords.size(); ++k)
    bound->keywords.push_back({bound->names[k], read.keywords[k].value});
  bound->config.grid = fixed;
  bound->config.device = read.placement.device;
  bound->config.stream = read.haveStream ? read.stream : read.placement.stream;
  bound->runtimeKernel = runtimeKernel;
  bound->target = target;
  Py_INCREF(self);
  bound->kernel = self;
  Py_ssize_t numKeywords = kwnames ? PyTuple_Size(kwnames) : 0;
  bound->objects = PyTuple_New(nargs - 1 + numKeywords);
  if (!bound->objects) {
    Py_DECREF(object);
    return nullptr;
  }
  for (Py_ssize_t i = 1; i < nargs + numKeywords; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SetItem(bound->objects, i - 1, args[i]);
  }
  // A builtin method bound to the object: called through vectorcall, which
  // the limited API before 3.12 offers only to builtin functions.
  PyObject *method = PyCFunction_New(&boundMethod, object);
  Py_DECREF(object);
  return method;
}

/// h() launches as bound; h(a, b) with new leading positional arguments
/// (read as a launch reads them; the next h() keeps them).
PyObject *boundCall(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) {
  BoundObject *bound = asBound(self);
  if (ABSL_PREDICT_FALSE(nargs != 0 || kwnames)) {
    if (kwnames && PyTuple_Size(kwnames) > 0) {
      PyErr_SetString(PyExc_TypeError,
                      "a bound launch takes new positional arguments only");
      return nullptr;
    }
    if ((size_t)nargs > bound->positional.size()) {
      PyErr_Format(PyExc_TypeError,
                   "this launch was bound with %zd positional arguments; "
                   "got %zd",
                   bound->positional.size(), nargs);
      return nullptr;
    }
    KernelObject *kernel = asKernel(bound->kernel);
    Placement placement;
    ReadContext context{kernel->manifest, false, &placement};
    absl::InlinedVector<rt::Argument, 16> values(nargs);
    for (Py_ssize_t i = 0; i < nargs; ++i)
      if (!readValue(args[i], i, kernel->manifest->params[i].name, context,
                     values[i]))
        return nullptr;
    if (placement.any && (placement.target != bound->target ||
                          placement.device != bound->config.device)) {
      PyErr_Format(ArgumentErrorType,
                   "this launch was bound on %s:%d; the new tensors are on "
                   "%s:%d",
                   targetName(bound->target), (int)bound->config.device,
                   targetName(placement.target), (int)placement.device);
      return nullptr;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      bound->positional[i] = values[i];
      Py_INCREF(args[i]);
      PyTuple_SetItem(bound->objects, i, args[i]);
    }
  }
  if (ABSL_PREDICT_FALSE(isShutDown()))
    return raiseShutDown();
  absl::StatusOr<rt::LaunchResult> result =
      launchReleased(*bound->runtimeKernel, bound->target, bound->config,
                     bound->positional, bound->keywords);
  if (ABSL_PREDICT_TRUE(result.ok() && !result->compiled))
    if (ABSL_PREDICT_TRUE(!restorePendingException()))
      Py_RETURN_NONE;
  return finish(result.status(), result.ok() && result->compiled);
}

PyMethodDef boundMethod = {
    "bound_launch", (PyCFunction)(void (*)(void))boundCall,
    METH_FASTCALL | METH_KEYWORDS,
    "A launch bound once (kernel.bind): () launches it again, (x, y) with "
    "new leading positional arguments. The grid and stream are those of the "
    "bind."};

int boundTraverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(asBound(self)->kernel);
  Py_VISIT(asBound(self)->objects);
  return 0;
}

int boundClear(PyObject *self) {
  Py_CLEAR(asBound(self)->kernel);
  Py_CLEAR(asBound(self)->objects);
  return 0;
}

void boundDealloc(PyObject *self) {
  BoundObject *bound = asBound(self);
  using Arguments = std::vector<rt::Argument>;
  using Names = std::vector<std::string>;
  using Keywords = std::vector<rt::KeywordArgument>;
  bound->positional.~Arguments();
  bound->names.~Names();
  bound->keywords.~Keywords();
  bound->config.~LaunchConfig();
  genericDealloc(self, boundClear);
}

PyType_Slot boundSlots[] = {
    {Py_tp_dealloc, (void *)boundDealloc},
    {Py_tp_traverse, (void *)boundTraverse},
    {Py_tp_clear, (void *)boundClear},
    {Py_tp_doc,
     (void *)"A launch bound once (kernel.bind): h() launches it again, "
             "h(x, y) with new leading positional arguments. The grid and "
             "stream are those of the bind."},
    {0, nullptr}};

//===----------------------------------------------------------------------===//
// Kernel type
//===----------------------------------------------------------------------===//

PyObject *kernelNew(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *module = nullptr;
  const char *name = nullptr;
  static const char *keywords[] = {"module", "name", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!s:Kernel",
                                   const_cast<char **>(keywords), ModuleType,
                                   &module, &name))
    return nullptr;
  PyObject *self = PyType_GenericAlloc(type, 0);
  if (!self)
    return nullptr;
  KernelObject *kernel = asKernel(self);
  new (&kernel->name) std::string(name);
  Py_INCREF(module);
  kernel->module = module;
  Target target = asModule(module).defaultTarget;
  rt::Kernel *runtimeKernel = kernelIn(kernel, target);
  if (!runtimeKernel) {
    Py_DECREF(self);
    return nullptr;
  }
  kernel->manifest = new rt::KernelManifest(runtimeKernel->manifest());
  return self;
}

int kernelTraverse(PyObject *self, visitproc visit, void *arg) {
  KernelObject *kernel = asKernel(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(kernel->module);
  Py_VISIT(kernel->preRunHooks);
  Py_VISIT(kernel->lastGrid);
  Py_VISIT(kernel->lastLauncher);
  return 0;
}

int kernelClear(PyObject *self) {
  KernelObject *kernel = asKernel(self);
  Py_CLEAR(kernel->preRunHooks);
  Py_CLEAR(kernel->lastGrid);
  Py_CLEAR(kernel->lastLauncher);
  // The module stays until deallocation: the runtime kernels live in it.
  return 0;
}

void kernelDealloc(PyObject *self) {
  KernelObject *kernel = asKernel(self);
  PyObject_GC_UnTrack(self);
  kernelClear(self);
  using String = std::string;
  kernel->name.~String();
  delete kernel->manifest;
  Py_CLEAR(kernel->module);
  PyTypeObject *type = Py_TYPE(self);
  auto free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

PyMethodDef kernelMethods[] = {
    {"launch", (PyCFunction)(void (*)(void))kernelLaunch,
     METH_FASTCALL | METH_KEYWORDS,
     "launch(grid, *args, stream=None, **kwargs): kernel[grid](*args, "
     "**kwargs) on an explicit stream (an int handle, or an object with "
     "cuda_stream or ptr)."},
    {"bind", (PyCFunction)(void (*)(void))kernelBind,
     METH_FASTCALL | METH_KEYWORDS,
     "bind(grid, *args, stream=None, **kwargs) -> BoundLaunch: checks the "
     "arguments now; calling the result launches (a callable grid is "
     "evaluated once, here)."},
    {"_warmup", (PyCFunction)(void (*)(void))kernelWarmup,
     METH_FASTCALL | METH_KEYWORDS,
     "_warmup(*args, grid=None, **kwargs) -> the record's JSON."},
    {"_preload", (PyCFunction)(void (*)(void))kernelPreload,
     METH_VARARGS | METH_KEYWORDS, "_preload(record_json, device=0)."},
    {"add_pre_run_hook", kernelAddPreRunHook, METH_O,
     "add_pre_run_hook(fn): fn(*args, **kwargs) runs before every launch and "
     "warmup, with the arguments as given; what it raises aborts the launch."},
    {"stats", kernelStats, METH_NOARGS,
     "Per target: compiles, disk_hits, remote_hits."},
    {"_autotuner", kernelAutotuner, METH_VARARGS | METH_STATIC,
     "_autotuner(configs, key, before, after, prune=None) -> the state of "
     "kjit.autotune."},
    {"_autotune_launch", (PyCFunction)(void (*)(void))kernelAutotuneLaunch,
     METH_FASTCALL | METH_KEYWORDS,
     "_autotune_launch(tuner, grid, *args, **kwargs): kjit.autotune's "
     "launch."},
    {"_autotune_best", kernelAutotuneBest, METH_O | METH_STATIC,
     "_autotune_best(tuner) -> the last launch's configuration index."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kernelGetters[] = {
    {"name", kernelName, nullptr, "The kernel's name.", nullptr},
    {"_manifest_json", kernelManifestJson, nullptr,
     "The kernel's manifest (parameters) as JSON.", nullptr},
    {"pre_run_hooks", kernelPreRunHooks, nullptr,
     "The list of pre-run hooks (remove one with .remove(fn)).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kernelSlots[] = {{Py_tp_new, (void *)kernelNew},
                             {Py_tp_dealloc, (void *)kernelDealloc},
                             {Py_tp_traverse, (void *)kernelTraverse},
                             {Py_tp_clear, (void *)kernelClear},
                             {Py_mp_subscript, (void *)kernelSubscript},
                             {Py_tp_methods, kernelMethods},
                             {Py_tp_getset, kernelGetters},
                             {0, nullptr}};
PyType_Spec kernelSpec = {
    "kjit._kjit.Kernel", sizeof(KernelObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, kernelSlots};

} // namespace

bool addKernelTypes(PyObject *module) {
  static PyType_Spec boundSpec = {"kjit._kjit.BoundLaunch", sizeof(BoundObject),
                                  0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
                                  boundSlots};
  return addType(module, "Kernel", kernelSpec, KernelType) &&
         addType(module, "_Launcher", launcherSpec, LauncherType) &&
         addType(module, "BoundLaunch", boundSpec, BoundType);
}

} // namespace kjit::python
