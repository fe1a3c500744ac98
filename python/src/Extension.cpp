//===- Extension.cpp - the kjit._kjit module: runtimes, modules, dtypes ---===//
//
// Module initialisation, the exception types and the mapping of kjit's
// statuses onto them, the dtype type, the runtime of each target, and the
// Module type (a kernel IR file loaded into whichever runtimes launch it).
// Kernels and launches are in Kernel.cpp.
//
//===----------------------------------------------------------------------===//

#include "Extension.h"
#include "Kernel.h"

#include "kjit/Model/DType.h"
#include "kjit/Runtime/Runtime.h"
#include "kjit/Support/StrCat.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <new>
#include <string>

namespace kjit::python {

PyObject *ErrorType, *ArgumentErrorType, *CompileErrorType;
PyTypeObject *DTypeType;
PyTypeObject *ModuleType;

const char *targetName(Target target) {
  return target == Target::Cuda ? "cuda" : "host";
}

namespace {
std::unique_ptr<rt::Runtime> runtimes[kNumTargets];
/// Every live module object, so that shutdown can let their runtime
/// modules go first.
std::vector<ModuleState *> liveModules;
bool shutDown = false;
} // namespace

bool isShutDown() { return shutDown; }

PyObject *raiseShutDown() {
  PyErr_SetString(ErrorType, "kjit has shut down: the interpreter is exiting");
  return nullptr;
}

rt::Runtime *existingRuntime(Target target) {
  return runtimes[static_cast<int>(target)].get();
}

rt::Runtime *runtimeFor(Target target) {
  if (shutDown) {
    raiseShutDown();
    return nullptr;
  }
  std::unique_ptr<rt::Runtime> &slot = runtimes[static_cast<int>(target)];
  if (slot)
    return slot.get();
  rt::RuntimeOptions options;
  options.target = targetName(target);
  if (hooksEnabled())
    options.plugins.push_back(extensionPath());
  absl::StatusOr<std::unique_ptr<rt::Runtime>> created =
      rt::Runtime::create(std::move(options));
  if (!created.ok()) {
    raiseStatus(created.status());
    return nullptr;
  }
  if (target == Target::Cuda && (*created)->interpreting()) {
    PyErr_SetString(ArgumentErrorType,
                    "KJIT_INTERPRET=1 runs every kernel on the host, which "
                    "cannot read CUDA memory: pass CPU tensors");
    return nullptr;
  }
  slot = std::move(*created);
  if (target == Target::Cuda)
    findCaptureQuery();
  return slot.get();
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {
/// The first `FILE:LINE:COL:` in a diagnostic: where a compile error is.
bool findLocation(std::string_view message, std::string &file, long &line,
                  long &column) {
  for (size_t colon = message.find(':'); colon != std::string_view::npos;
       colon = message.find(':', colon + 1)) {
    size_t p = colon + 1, lineStart = p;
    while (p < message.size() && std::isdigit((unsigned char)message[p]))
      ++p;
    if (p == lineStart || p >= message.size() || message[p] != ':')
      continue;
    size_t columnStart = ++p;
    while (p < message.size() && std::isdigit((unsigned char)message[p]))
      ++p;
    if (p == columnStart || p >= message.size() || message[p] != ':')
      continue;
    size_t fileStart = colon;
    while (fileStart > 0 &&
           !std::isspace((unsigned char)message[fileStart - 1]) &&
           message[fileStart - 1] != '\'')
      --fileStart;
    if (fileStart == colon)
      continue;
    file = std::string(message.substr(fileStart, colon - fileStart));
    line = std::stol(
        std::string(message.substr(lineStart, columnStart - 1 - lineStart)));
    column =
        std::stol(std::string(message.substr(columnStart, p - columnStart)));
    return true;
  }
  return false;
}
} // namespace

PyObject *raiseStatus(const absl::Status &status) {
  std::string message(status.message().data(), status.message().size());
  std::string file;
  long line = 0, column = 0;
  if (status.code() == absl::StatusCode::kInvalidArgument &&
      !findLocation(message, file, line, column)) {
    PyErr_SetString(ArgumentErrorType, message.c_str());
    return nullptr;
  }
  if (findLocation(message, file, line, column)) {
    PyObject *error =
        PyObject_CallFunction(CompileErrorType, "s", message.c_str());
    if (!error)
      return nullptr;
    PyObject *fileObject = PyUnicode_FromString(file.c_str());
    PyObject *lineObject = PyLong_FromLong(line);
    PyObject *columnObject = PyLong_FromLong(column);
    PyObject_SetAttrString(error, "file", fileObject);
    PyObject_SetAttrString(error, "line", lineObject);
    PyObject_SetAttrString(error, "column", columnObject);
    Py_XDECREF(fileObject);
    Py_XDECREF(lineObject);
    Py_XDECREF(columnObject);
    PyErr_SetObject(CompileErrorType, error);
    Py_DECREF(error);
    return nullptr;
  }
  PyErr_SetString(ErrorType, message.c_str());
  return nullptr;
}

bool addType(PyObject *module, const char *name, PyType_Spec &spec,
             PyTypeObject *&out) {
  PyObject *type = PyType_FromSpec(&spec);
  if (!type)
    return false;
  out = reinterpret_cast<PyTypeObject *>(type);
  Py_INCREF(type);
  return PyModule_AddObject(module, name, type) == 0;
}

//===----------------------------------------------------------------------===//
// dtype
//===----------------------------------------------------------------------===//

namespace {
struct DTypeObject {
  PyObject_HEAD rt::DType dtype;
};

PyObject *dtypeNew(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  const char *name = nullptr;
  static const char *keywords[] = {"name", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s:dtype",
                                   const_cast<char **>(keywords), &name))
    return nullptr;
  std::optional<rt::DType> dtype = rt::parseDType(name);
  if (!dtype) {
    PyErr_Format(PyExc_ValueError, "unknown dtype '%s'", name);
    return nullptr;
  }
  PyObject *self = PyType_GenericAlloc(type, 0);
  if (self)
    reinterpret_cast<DTypeObject *>(self)->dtype = *dtype;
  return self;
}

PyObject *dtypeName(PyObject *self, void *) {
  std::string_view name =
      rt::canonicalName(reinterpret_cast<DTypeObject *>(self)->dtype);
  return PyUnicode_FromStringAndSize(name.data(), name.size());
}

PyObject *dtypeRepr(PyObject *self) {
  std::string_view name =
      rt::canonicalName(reinterpret_cast<DTypeObject *>(self)->dtype);
  return PyUnicode_FromFormat("kjit.dtype('%s')", std::string(name).c_str());
}

PyObject *dtypeCompare(PyObject *a, PyObject *b, int op) {
  if (Py_TYPE(b) != DTypeType || (op != Py_EQ && op != Py_NE))
    Py_RETURN_NOTIMPLEMENTED;
  bool equal = dtypeOf(a) == dtypeOf(b);
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

Py_hash_t dtypeHash(PyObject *self) {
  return static_cast<Py_hash_t>(dtypeOf(self)) + 1;
}

PyGetSetDef dtypeGetters[] = {{"name", dtypeName, nullptr,
                               "The canonical name: 'fp32', 'bf16', 'i1'.",
                               nullptr},
                              {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot dtypeSlots[] = {
    {Py_tp_new, (void *)dtypeNew},
    {Py_tp_repr, (void *)dtypeRepr},
    {Py_tp_str, (void *)dtypeName},
    {Py_tp_richcompare, (void *)dtypeCompare},
    {Py_tp_hash, (void *)dtypeHash},
    {Py_tp_getset, dtypeGetters},
    {Py_tp_doc, (void *)"A kjit element type: kjit.dtype('fp32') is "
                        "kjit.float32. Stands for a tensor in warmup()."},
    {0, nullptr}};
PyType_Spec dtypeSpec = {"kjit._kjit.dtype", sizeof(DTypeObject), 0,
                         Py_TPFLAGS_DEFAULT, dtypeSlots};
} // namespace

rt::DType dtypeOf(PyObject *object) {
  return reinterpret_cast<DTypeObject *>(object)->dtype;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

ModuleState &asModule(PyObject *object) {
  return reinterpret_cast<ModuleObject *>(object)->state;
}

rt::Module *ModuleState::in(Target target) {
  std::shared_ptr<rt::Module> &slot = modules[static_cast<int>(target)];
  if (slot)
    return slot.get();
  rt::Runtime *runtime = runtimeFor(target);
  if (!runtime)
    return nullptr;
  absl::StatusOr<std::shared_ptr<rt::Module>> loaded =
      isText ? rt::Module::fromText(*runtime, source, sourceName)
             : rt::Module::load(*runtime, source);
  if (!loaded.ok()) {
    raiseStatus(loaded.status());
    return nullptr;
  }
  slot = std::move(*loaded);
  // Globals set before this runtime loaded the module hold here too.
  for (const auto &[name, value] : globals)
    if (absl::Status set = slot->setGlobal(name, value); !set.ok()) {
      raiseStatus(set);
      return nullptr;
    }
  return slot.get();
}

namespace {
PyObject *moduleNew(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  const char *source = nullptr, *name = nullptr, *target = nullptr;
  int isText = 0;
  static const char *keywords[] = {"source", "is_text", "name", "target",
                                   nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sp|zz:Module",
                                   const_cast<char **>(keywords), &source,
                                   &isText, &name, &target))
    return nullptr;
  Target defaultTarget = Target::Host;
  if (target && std::string_view(target) == "cuda")
    defaultTarget = Target::Cuda;
  else if (target && std::string_view(target) != "host") {
    PyErr_Format(PyExc_ValueError,
                 "unknown target '%s' (kjit launches on 'host' and 'cuda')",
                 target);
    return nullptr;
  }
  PyObject *self = PyType_GenericAlloc(type, 0);
  if (!self)
    return nullptr;
  ModuleState *module =
      new (&reinterpret_cast<ModuleObject *>(self)->state) ModuleState();
  module->source = source;
  module->isText = isText;
  module->sourceName = name ? name : (isText ? "<string>" : source);
  module->defaultTarget = defaultTarget;
  module->targetFixed = target != nullptr;
  liveModules.push_back(module);
  // Analysed now, so that a bad file is reported by load().
  if (!module->in(defaultTarget)) {
    Py_DECREF(self);
    return nullptr;
  }
  return self;
}

void moduleDealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  ModuleState *state = &asModule(self);
  liveModules.erase(std::find(liveModules.begin(), liveModules.end(), state));
  state->~ModuleState();
  auto free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

/// The module of the default target, which load() made; null with the
/// exception set after shutdown.
rt::Module *primary(ModuleState &module) {
  if (shutDown) {
    raiseShutDown();
    return nullptr;
  }
  return module.modules[static_cast<int>(module.defaultTarget)].get();
}

PyObject *moduleKernelNames(PyObject *self, PyObject *) {
  rt::Module *module = primary(asModule(self));
  if (!module)
    return nullptr;
  std::vector<std::string> names = module->kernelNames();
  PyObject *list = PyList_New((Py_ssize_t)names.size());
  for (size_t i = 0; list && i < names.size(); ++i)
    PyList_SetItem(list, (Py_ssize_t)i, PyUnicode_FromString(names[i].c_str()));
  return list;
}

PyObject *moduleSetGlobal(PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "set_global(name, value)");
    return nullptr;
  }
  const char *name = PyUnicode_AsUTF8AndSize(args[0], nullptr);
  Placement placement;
  ReadContext context;
  context.placement = &placement;
  rt::Argument value;
  if (!name || !readValue(args[1], -1, name, context, value))
    return nullptr;
  ModuleState &module = asModule(self);
  if (shutDown)
    return raiseShutDown();
  for (auto &loaded : module.modules)
    if (loaded)
      if (absl::Status set = loaded->setGlobal(name, value); !set.ok())
        return raiseStatus(set);
  module.globals.emplace_back(name, value);
  Py_RETURN_NONE;
}

PyObject *moduleGetGlobal(PyObject *self, PyObject *nameObject) {
  const char *name = PyUnicode_Check(nameObject)
                         ? PyUnicode_AsUTF8AndSize(nameObject, nullptr)
                         : nullptr;
  if (!name) {
    PyErr_SetString(PyExc_TypeError, "get_global(name): name must be a str");
    return nullptr;
  }
  rt::Module *module = primary(asModule(self));
  if (!module)
    return nullptr;
  absl::StatusOr<std::string> value = module->global(name);
  if (!value.ok())
    return raiseStatus(value.status());
  return PyUnicode_FromStringAndSize(value->data(), value->size());
}

PyObject *moduleSourceName(PyObject *self, void *) {
  return PyUnicode_FromString(asModule(self).sourceName.c_str());
}

PyMethodDef moduleMethods[] = {
    {"kernel_names", moduleKernelNames, METH_NOARGS,
     "The names of the module's kernels."},
    {"set_global", (PyCFunction)(void (*)(void))moduleSetGlobal, METH_FASTCALL,
     "set_global(name, value): assign a module global ('inner::NAME' for one "
     "of a nested module). Kernels that baked the old value notice at their "
     "next launch."},
    {"get_global", moduleGetGlobal, METH_O,
     "get_global(name): the global's current value as text."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef moduleGetters[] = {{"source_name", moduleSourceName, nullptr,
                                "The name diagnostics give the kernel file.",
                                nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot moduleSlots[] = {
    {Py_tp_new, (void *)moduleNew},
    {Py_tp_dealloc, (void *)moduleDealloc},
    {Py_tp_methods, moduleMethods},
    {Py_tp_getset, moduleGetters},
    {Py_tp_doc, (void *)"Module(source, is_text, name=None, target=None): a "
                        "kernel IR file (use kjit.load)."},
    {0, nullptr}};
PyType_Spec moduleSpec = {"kjit._kjit.Module", sizeof(ModuleObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                          moduleSlots};

//===----------------------------------------------------------------------===//
// Module-level functions
//===----------------------------------------------------------------------===//

PyObject *enableHooksFunction(PyObject *, PyObject *) {
  if (!enableHooks())
    return nullptr;
  Py_RETURN_NONE;
}

/// Called by atexit while the interpreter and the CUDA driver still run:
/// the runtime modules go (their kernels unload), then the runtimes (their
/// plugins finish: the fleet cache drains, the trace is written). Without
/// it, static destructors would run after the driver shut down. Later
/// launches raise.
PyObject *shutdownFunction(PyObject *, PyObject *) {
  if (shutDown)
    Py_RETURN_NONE;
  shutDown = true;
  PyThreadState *thread = PyEval_SaveThread();
  for (ModuleState *module : liveModules)
    for (std::shared_ptr<rt::Module> &loaded : module->modules)
      loaded.reset();
  for (std::unique_ptr<rt::Runtime> &runtime : runtimes)
    runtime.reset();
  PyEval_RestoreThread(thread);
  Py_RETURN_NONE;
}

PyObject *compilerLoaded(PyObject *, PyObject *) {
  for (int t = 0; t < kNumTargets; ++t)
    if (rt::Runtime *runtime = existingRuntime(static_cast<Target>(t)))
      if (runtime->compilerLoaded())
        Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

PyMethodDef functions[] = {
    {"_set_hook_dispatcher", setHookDispatcher, METH_O,
     "Sets the function that receives the runtime's hook events."},
    {"_enable_hooks", enableHooksFunction, METH_NOARGS,
     "Loads the hook plugin into every runtime (on the first hook set)."},
    {"_shutdown", shutdownFunction, METH_NOARGS,
     "Unloads every kernel and shuts the runtimes down (atexit)."},
    {"compiler_loaded", compilerLoaded, METH_NOARGS,
     "Whether any runtime of this process has opened the compiler library "
     "(a process that only finds its kernels in the disk cache never does)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {
    PyModuleDef_HEAD_INIT,
    "kjit._kjit",
    "The native part of the kjit package (docs/Python.md).",
    -1,
    functions,
    nullptr,
    nullptr,
    nullptr,
    nullptr};

bool addException(PyObject *module, const char *name, const char *qualified,
                  PyObject *bases, const char *doc, PyObject *&out) {
  out = PyErr_NewExceptionWithDoc(qualified, doc, bases, nullptr);
  if (!out)
    return false;
  Py_INCREF(out);
  return PyModule_AddObject(module, name, out) == 0;
}
} // namespace

} // namespace kjit::python

using namespace kjit::python;

extern "C" KJIT_PLUGIN_EXPORT PyObject *PyInit__kjit() {
  PyObject *module = PyModule_Create(&moduleDef);
  if (!module)
    return nullptr;
  PyObject *argumentBases = nullptr;
  bool ok =
      addException(module, "Error", "kjit.Error", PyExc_RuntimeError,
                   "A kjit failure; the message is kjit's.", ErrorType) &&
      (argumentBases = PyTuple_Pack(2, ErrorType, PyExc_TypeError)) &&
      addException(module, "ArgumentError", "kjit.ArgumentError", argumentBases,
                   "Launch arguments the binder refuses (also a TypeError).",
                   ArgumentErrorType) &&
      addException(module, "CompileError", "kjit.CompileError", ErrorType,
                   "A kernel that does not parse, verify or compile; .file, "
                   ".line and .column locate the first diagnostic.",
                   CompileErrorType) &&
      addType(module, "dtype", dtypeSpec, DTypeType) &&
      addType(module, "Module", moduleSpec, ModuleType) &&
      addKernelTypes(module);
  Py_XDECREF(argumentBases);
  if (!ok) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
