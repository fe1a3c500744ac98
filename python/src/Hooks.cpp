//===- Hooks.cpp - Python hooks through the plugin ABI --------------------===//
//
// The extension module is also a kjit plugin: it exports the ABI's entry
// symbol, and a runtime loads the module's own file as a plugin once the
// first Python hook is set (enableHooks). Its hooks hand each event to one
// Python function (kjit._dispatch_hook, set by kjit/__init__.py), which
// calls the user's hooks. An exception a Python hook raises cannot travel
// through the runtime: it is kept per thread and raised when the runtime
// call that ran the hook returns (restorePendingException).
//
//===----------------------------------------------------------------------===//

#include "Extension.h"

#include "kjit-c/Plugin.h"
#include "kjit/Runtime/Runtime.h"

#include <dlfcn.h>

#include <cstring>
#include <string>

namespace kjit::python {
namespace {

PyObject *dispatcher = nullptr;
bool enabled = false;

/// The exception a hook raised on this thread, until the runtime call
/// returns.
struct Pending {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
};
thread_local Pending pending;

PyObject *text(const char *data, size_t size) {
  return PyUnicode_DecodeUTF8(data ? data : "", data ? (Py_ssize_t)size : 0,
                              "replace");
}

PyObject *compileInfo(const kjit_compile_info &info) {
  return Py_BuildValue(
      "{s:N,s:N,s:N,s:N,s:N,s:i,s:O}", "name",
      text(info.kernel_name, info.kernel_name_len), "key",
      text(info.key, info.key_len), "repr", text(info.repr, info.repr_len),
      "compile_json", text(info.compile_json, info.compile_json_len), "target",
      text(info.target, info.target_len), "device", (int)info.device,
      "is_warmup", info.is_warmup ? Py_True : Py_False);
}

/// Calls the dispatcher with (kind, payload) under the GIL; its result, or
/// null with the exception kept for the caller of the runtime.
PyObject *dispatch(const char *kind, PyObject *payload) {
  if (!payload) {
    stashException();
    return nullptr;
  }
  if (!dispatcher) {
    Py_DECREF(payload);
    Py_RETURN_NONE;
  }
  PyObject *result = PyObject_CallFunction(dispatcher, "sN", kind, payload);
  if (!result)
    stashException();
  return result;
}

kjit_status *onCache(void *, const kjit_cache_event *event, int32_t *decision) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *result = dispatch("cache", compileInfo(*event->info));
  // A hook that raised skips the compile: its exception is the launch's
  // outcome.
  int skip = result ? PyObject_IsTrue(result) : 1;
  if (skip < 0) {
    stashException();
    skip = 1;
  }
  if (skip)
    *decision = KJIT_CACHE_SKIP;
  Py_XDECREF(result);
  PyGILState_Release(gil);
  return nullptr;
}

kjit_status *onCompiled(void *, const kjit_compiled_event *event) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *info = compileInfo(*event->info);
  if (info) {
    PyObject *metadata = text(event->metadata_json, event->metadata_json_len);
    PyObject *format = text(event->artifact_format, event->artifact_format_len);
    PyDict_SetItemString(info, "metadata_json", metadata);
    PyDict_SetItemString(info, "artifact_format", format);
    Py_XDECREF(metadata);
    Py_XDECREF(format);
    PyObject *nanos = PyLong_FromUnsignedLongLong(event->compile_ns);
    PyDict_SetItemString(info, "compile_ns", nanos);
    Py_XDECREF(nanos);
  }
  Py_XDECREF(dispatch("compiled", info));
  PyGILState_Release(gil);
  return nullptr;
}

PyObject *launchInfo(const kjit_launch_event &event) {
  return Py_BuildValue(
      "{s:N,s:N,s:(III),s:I,s:i,s:K,s:N,s:K,s:i}", "name",
      text(event.kernel_name, event.kernel_name_len), "key",
      text(event.key, event.key_len), "grid", event.grid[0], event.grid[1],
      event.grid[2], "num_warps", event.num_warps, "device", (int)event.device,
      "stream", (unsigned long long)event.stream, "metadata_json",
      text(event.metadata_json, event.metadata_json_len), "correlation_id",
      (unsigned long long)event.correlation_id, "launch_status",
      (int)event.launch_status);
}

kjit_status *onLaunchEnter(void *, const kjit_launch_event *event, uint64_t *) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF(dispatch("launch_enter", launchInfo(*event)));
  PyGILState_Release(gil);
  return nullptr;
}

kjit_status *onLaunchExit(void *, const kjit_launch_event *event, uint64_t *) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF(dispatch("launch_exit", launchInfo(*event)));
  PyGILState_Release(gil);
  return nullptr;
}

const kjit_hook_table hookTable = {
    sizeof(kjit_hook_table),
    nullptr,
    onCache,
    onCompiled,
    onLaunchEnter,
    onLaunchExit,
    /*pre_run=*/nullptr, // run by the extension, with the Python objects
    /*launch_complete=*/nullptr,
};

const kjit_plugin_api pluginApi = {
    sizeof(kjit_plugin_api), nullptr,    "python", 6, "1", 1,
    KJIT_CAP_THREAD_SAFE, // every hook takes the GIL itself
    /*init=*/nullptr,
    /*fini=*/nullptr,        &hookTable,
    /*backend=*/nullptr,
    /*cache_store=*/nullptr,
};

} // namespace

void stashException() {
  if (pending.type) {
    // The first exception wins; later ones (a hook chain going on after a
    // failure) are dropped, as Python drops them inside a finally.
    PyErr_Clear();
    return;
  }
  PyErr_Fetch(&pending.type, &pending.value, &pending.traceback);
}

bool restorePendingException() {
  if (!pending.type)
    return false;
  PyErr_Restore(pending.type, pending.value, pending.traceback);
  pending = Pending();
  return true;
}

PyObject *setHookDispatcher(PyObject *, PyObject *function) {
  if (function != Py_None && !PyCallable_Check(function)) {
    PyErr_SetString(PyExc_TypeError, "the hook dispatcher must be callable");
    return nullptr;
  }
  Py_XDECREF(dispatcher);
  dispatcher = function == Py_None ? nullptr : function;
  Py_XINCREF(dispatcher);
  Py_RETURN_NONE;
}

const std::string &extensionPath() {
  static const std::string path = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<const void *>(&hookTable), &info) &&
        info.dli_fname)
      return std::string(info.dli_fname);
    return std::string();
  }();
  return path;
}

bool hooksEnabled() { return enabled; }

bool enableHooks() {
  if (enabled)
    return true;
  for (int t = 0; t < kNumTargets; ++t) {
    rt::Runtime *runtime = existingRuntime(static_cast<Target>(t));
    if (!runtime)
      continue;
    absl::Status loaded = runtime->plugins().loadPlugin(extensionPath());
    if (!loaded.ok()) {
      raiseStatus(loaded);
      return false;
    }
  }
  enabled = true;
  return true;
}

} // namespace kjit::python

extern "C" KJIT_PLUGIN_EXPORT int32_t
kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (io->host_max_minor < 2) {
    io->reject_reason = "the Python hooks need plugin ABI 1.2";
    io->reject_reason_len = std::strlen(io->reject_reason);
    return KJIT_STATUS_FAILED_PRECONDITION;
  }
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &kjit::python::pluginApi;
  return KJIT_STATUS_OK;
}
