/*===- raw_launch_ext.c - the raw cuLaunchKernel floors, from Python ------===*\
|*                                                                            *|
|* _kjit_raw_launch: the two floors launch_bench.py puts beside kjit's and    *|
|* Triton's Python launches, in the same process, context and stream:         *|
|*                                                                            *|
|*   launch_prepared()  one cuLaunchKernel whose parameters were packed by    *|
|*                      prepare(): the least a launch from Python can cost    *|
|*                      (one METH_FASTCALL call, at most a slot to read);     *|
|*   c_loop(n)          the same cuLaunchKernel n times in a C loop: the      *|
|*                      driver alone, what a C program pays.                  *|
|*                                                                            *|
|* The driver (libcuda.so.1, or KJIT_CUDA_DRIVER as for kjit's cuda backend)  *|
|* is opened with dlopen on first use and every entry point is                *|
|* resolved through cuGetProcAddress_v2 (plain dlsym can return an older      *|
|* ABI of the same name), so this builds with neither the CUDA toolkit nor    *|
|* a GPU, and importing it never touches the driver. Written against the      *|
|* limited API of Python 3.10, like kjit._kjit, so one binary loads in the    *|
|* GPU machine's Python as well as the build machine's.                       *|
|*                                                                            *|
|*   load(image, name) -> function       a kernel of a PTX or cubin image     *|
|*   mem_alloc(nbytes) -> int            device memory (never freed)          *|
|*   prepare(function, grid, block, fmt, *values, stream=0, shared=0)         *|
|*       -> slot                          packs the parameters once; fmt has  *|
|*                                        one letter per value: P pointer,    *|
|*                                        Q/q 64-bit, I/i 32-bit, f float,    *|
|*                                        d double                            *|
|*   launch_prepared([slot])             one launch (default: the last slot)  *|
|*   c_loop(n[, slot])                   n launches from C                    *|
|*   synchronize()                       cuCtxSynchronize                     *|
|*   driver_error() -> str or None       why the driver cannot be used        *|
\*===----------------------------------------------------------------------===*/
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The few driver types used, declared here: the CUDA headers are not needed
 * to build this. Handles are opaque pointers, as in cuda.h. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
typedef CUresult (*GetProcAddressFn)(const char *, void **, int, uint64_t,
                                     int *);

static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void **, void **);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuStreamSynchronize)(CUstream);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);

/* 0: not tried yet; 1: ready; -1: failed, with the reason in open_error. */
static int driver_state;
static char open_error[512];
static CUcontext context;

/* A prepared launch: the function, its geometry, and its parameters packed
 * once. Each value sits in its own 8-byte cell, stored at the cell's start;
 * the driver reads as many bytes from a cell as the kernel's parameter has,
 * so a 32-bit value is read as the 4 bytes that were written. */
#define MAX_SLOTS 16
#define MAX_PARAMS 64
typedef struct {
  int used;
  CUfunction function;
  unsigned grid[3], block[3], shared;
  CUstream stream;
  uint64_t cells[MAX_PARAMS];
  void *params[MAX_PARAMS];
} Prepared;
static Prepared slots[MAX_SLOTS];
static int last_slot = -1;

static const char *describe(CUresult r) {
  const char *s = NULL;
  if (p_cuGetErrorString && p_cuGetErrorString(r, &s) == 0 && s)
    return s;
  return "unknown CUDA error";
}

/* Raises RuntimeError for a failed driver call; returns NULL. */
static PyObject *raise_cuda(const char *what, CUresult r) {
  PyErr_Format(PyExc_RuntimeError, "%s failed: %d (%s)", what, (int)r,
               describe(r));
  return NULL;
}

/* Opens the driver and makes device 0's primary context current on the
 * calling thread: the context torch and kjit's cuda backend use too, so the
 * raw launches share their context. Returns 0, or -1 with an exception. */
static int open_driver(void) {
  GetProcAddressFn get_proc;
  const char *path;
  void *lib;
  CUdevice device;
  CUresult r;
  if (driver_state == 1) {
    /* Again on every call but the hot ones: the thread may have changed. */
    if ((r = p_cuCtxSetCurrent(context)) != 0) {
      raise_cuda("cuCtxSetCurrent", r);
      return -1;
    }
    return 0;
  }
  if (driver_state == -1) {
    PyErr_SetString(PyExc_RuntimeError, open_error);
    return -1;
  }
  driver_state = -1;
  /* The driver kjit's cuda backend opens: KJIT_CUDA_DRIVER names another
   * (the tests' fake driver), so both floors and kjit share one driver. */
  path = getenv("KJIT_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    snprintf(open_error, sizeof open_error, "cannot open %s: %s", path,
             why ? why : "?");
    PyErr_SetString(PyExc_RuntimeError, open_error);
    return -1;
  }
  *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(open_error, sizeof open_error,
             "%s has no cuGetProcAddress_v2 (a driver older than CUDA 12)",
             path);
    PyErr_SetString(PyExc_RuntimeError, open_error);
    return -1;
  }
  /* The CUDA 12 ABI of each entry point, which CUDA 13 drivers still hand
   * out; else the CUDA 13 one (the tests' fake driver offers only that). */
#define RESOLVE(name, required)                                                \
  do {                                                                         \
    int found = 0;                                                             \
    if ((get_proc(#name, (void **)&p_##name, 12000, 0, &found) != 0 ||         \
         !p_##name) &&                                                         \
        (get_proc(#name, (void **)&p_##name, 13000, 0, &found) != 0 ||         \
         !p_##name) &&                                                         \
        required) {                                                            \
      snprintf(open_error, sizeof open_error, "cannot resolve %s", #name);     \
      PyErr_SetString(PyExc_RuntimeError, open_error);                         \
      return -1;                                                               \
    }                                                                          \
  } while (0)
  RESOLVE(cuGetErrorString, 0);
  RESOLVE(cuInit, 1);
  RESOLVE(cuDeviceGet, 1);
  RESOLVE(cuDevicePrimaryCtxRetain, 1);
  RESOLVE(cuCtxSetCurrent, 1);
  RESOLVE(cuModuleLoadData, 1);
  RESOLVE(cuModuleGetFunction, 1);
  RESOLVE(cuMemAlloc, 1);
  RESOLVE(cuLaunchKernel, 1);
  /* Without cuCtxSynchronize (the fake driver), synchronize() waits for
   * the legacy default stream, which every launch here uses by default. */
  RESOLVE(cuCtxSynchronize, 0);
  if (!p_cuCtxSynchronize)
    RESOLVE(cuStreamSynchronize, 1);
#undef RESOLVE
#define CHECK(call, what)                                                      \
  do {                                                                         \
    if ((r = (call)) != 0) {                                                   \
      snprintf(open_error, sizeof open_error, "%s failed: %d (%s)", what,      \
               (int)r, describe(r));                                           \
      PyErr_SetString(PyExc_RuntimeError, open_error);                         \
      return -1;                                                               \
    }                                                                          \
  } while (0)
  CHECK(p_cuInit(0), "cuInit");
  CHECK(p_cuDeviceGet(&device, 0), "cuDeviceGet");
  CHECK(p_cuDevicePrimaryCtxRetain(&context, device),
        "cuDevicePrimaryCtxRetain");
  CHECK(p_cuCtxSetCurrent(context), "cuCtxSetCurrent");
#undef CHECK
  driver_state = 1;
  return 0;
}

static PyObject *driver_error(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  if (open_driver() == 0)
    Py_RETURN_NONE;
  PyErr_Clear();
  return PyUnicode_FromString(open_error);
}

/* load(image: bytes, name: str) -> int: the CUfunction as an int. The
 * module stays loaded for the life of the process. */
static PyObject *load(PyObject *self, PyObject *args) {
  const char *image, *name;
  Py_ssize_t size;
  char *copy;
  CUmodule module;
  CUfunction function;
  CUresult r;
  (void)self;
  if (!PyArg_ParseTuple(args, "y#s:load", &image, &size, &name))
    return NULL;
  if (open_driver() < 0)
    return NULL;
  /* The driver reads PTX up to its NUL; a copy makes sure there is one. */
  copy = malloc((size_t)size + 1);
  if (!copy)
    return PyErr_NoMemory();
  memcpy(copy, image, (size_t)size);
  copy[size] = 0;
  r = p_cuModuleLoadData(&module, copy);
  free(copy);
  if (r)
    return raise_cuda("cuModuleLoadData", r);
  if ((r = p_cuModuleGetFunction(&function, module, name)))
    return raise_cuda("cuModuleGetFunction", r);
  return PyLong_FromVoidPtr((void *)function);
}

static PyObject *mem_alloc(PyObject *self, PyObject *arg) {
  CUdeviceptr pointer;
  CUresult r;
  Py_ssize_t size = PyLong_AsSsize_t(arg);
  (void)self;
  if (size == -1 && PyErr_Occurred())
    return NULL;
  if (size <= 0) {
    PyErr_SetString(PyExc_ValueError, "mem_alloc needs a positive size");
    return NULL;
  }
  if (open_driver() < 0)
    return NULL;
  if ((r = p_cuMemAlloc(&pointer, (size_t)size)))
    return raise_cuda("cuMemAlloc", r);
  return PyLong_FromUnsignedLongLong(pointer);
}

/* A grid or block: an int, or a tuple or list of 1 to 3 ints. */
static int read_dims(PyObject *object, unsigned dims[3], const char *what) {
  Py_ssize_t i, size;
  dims[0] = dims[1] = dims[2] = 1;
  if (PyLong_Check(object)) {
    unsigned long value = PyLong_AsUnsignedLong(object);
    if (value == (unsigned long)-1 && PyErr_Occurred())
      return -1;
    if (value == 0 || value > 0xFFFFFFFFul) {
      PyErr_Format(PyExc_ValueError, "%s must be from 1 to 2^32-1", what);
      return -1;
    }
    dims[0] = (unsigned)value;
    return 0;
  }
  if (!PyTuple_Check(object) && !PyList_Check(object)) {
    PyErr_Format(PyExc_TypeError, "%s is an int or a tuple of 1 to 3 ints",
                 what);
    return -1;
  }
  size = PySequence_Size(object);
  if (size < 1 || size > 3) {
    PyErr_Format(PyExc_ValueError, "%s has 1 to 3 dimensions", what);
    return -1;
  }
  for (i = 0; i < size; ++i) {
    PyObject *item = PySequence_GetItem(object, i);
    unsigned long value;
    if (!item)
      return -1;
    value = PyLong_AsUnsignedLong(item);
    Py_DECREF(item);
    if (value == (unsigned long)-1 && PyErr_Occurred())
      return -1;
    if (value == 0 || value > 0xFFFFFFFFul) {
      PyErr_Format(PyExc_ValueError, "%s[%zd] must be from 1 to 2^32-1", what,
                   i);
      return -1;
    }
    dims[i] = (unsigned)value;
  }
  return 0;
}

/* Stores `value` as format letter `kind` at the start of `cell`. */
static int pack_value(char kind, PyObject *value, uint64_t *cell,
                      Py_ssize_t index) {
  *cell = 0;
  switch (kind) {
  case 'P':
  case 'Q': {
    unsigned long long v = PyLong_AsUnsignedLongLong(value);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
      return -1;
    memcpy(cell, &v, 8);
    return 0;
  }
  case 'q': {
    long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred())
      return -1;
    memcpy(cell, &v, 8);
    return 0;
  }
  case 'I':
  case 'i': {
    long long v = PyLong_AsLongLong(value);
    uint32_t bits;
    if (v == -1 && PyErr_Occurred())
      return -1;
    if (kind == 'I' ? (v < 0 || v > 0xFFFFFFFFll)
                    : (v < INT32_MIN || v > INT32_MAX)) {
      PyErr_Format(PyExc_OverflowError, "value %zd (%lld) does not fit '%c'",
                   index, v, kind);
      return -1;
    }
    bits = (uint32_t)v;
    memcpy(cell, &bits, 4);
    return 0;
  }
  case 'f': {
    double v = PyFloat_AsDouble(value);
    float f = (float)v;
    if (v == -1.0 && PyErr_Occurred())
      return -1;
    memcpy(cell, &f, 4);
    return 0;
  }
  case 'd': {
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred())
      return -1;
    memcpy(cell, &v, 8);
    return 0;
  }
  default:
    PyErr_Format(PyExc_ValueError,
                 "format letter '%c' is none of P Q q I i f d", kind);
    return -1;
  }
}

/* prepare(function, grid, block, fmt, *values, stream=0, shared=0) -> slot.
 * Not on the timed path, so it parses its arguments the plain way. */
static PyObject *prepare(PyObject *self, PyObject *args, PyObject *kwargs) {
  Prepared prepared;
  Py_ssize_t nargs = PyTuple_Size(args), nvalues, i, length;
  const char *fmt;
  PyObject *object;
  int slot;
  (void)self;
  memset(&prepared, 0, sizeof prepared);
  if (nargs < 4) {
    PyErr_SetString(PyExc_TypeError,
                    "prepare(function, grid, block, fmt, *values, stream=0, "
                    "shared=0)");
    return NULL;
  }
  prepared.function = (CUfunction)PyLong_AsVoidPtr(PyTuple_GetItem(args, 0));
  if (!prepared.function) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "function is null");
    return NULL;
  }
  if (read_dims(PyTuple_GetItem(args, 1), prepared.grid, "grid") < 0 ||
      read_dims(PyTuple_GetItem(args, 2), prepared.block, "block") < 0)
    return NULL;
  object = PyTuple_GetItem(args, 3);
  if (!PyUnicode_Check(object)) {
    PyErr_SetString(PyExc_TypeError, "fmt is a str such as 'PPPPIIII'");
    return NULL;
  }
  fmt = PyUnicode_AsUTF8AndSize(object, &length);
  if (!fmt)
    return NULL;
  nvalues = nargs - 4;
  if (length != nvalues || nvalues > MAX_PARAMS) {
    PyErr_Format(PyExc_TypeError,
                 "fmt '%s' names %zd values; %zd given (at most %d)", fmt,
                 length, nvalues, MAX_PARAMS);
    return NULL;
  }
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      if (PyUnicode_CompareWithASCIIString(key, "stream") == 0) {
        prepared.stream = (CUstream)PyLong_AsVoidPtr(value);
      } else if (PyUnicode_CompareWithASCIIString(key, "shared") == 0) {
        prepared.shared = (unsigned)PyLong_AsUnsignedLong(value);
      } else {
        PyErr_Format(PyExc_TypeError, "prepare() got an unknown keyword %R",
                     key);
        return NULL;
      }
      if (PyErr_Occurred())
        return NULL;
    }
  }
  for (i = 0; i < nvalues; ++i) {
    if (pack_value(fmt[i], PyTuple_GetItem(args, 4 + i), &prepared.cells[i],
                   i) < 0)
      return NULL;
  }
  if (open_driver() < 0)
    return NULL;
  for (slot = 0; slot < MAX_SLOTS && slots[slot].used; ++slot)
    ;
  if (slot == MAX_SLOTS) {
    PyErr_Format(PyExc_RuntimeError, "at most %d prepared launches", MAX_SLOTS);
    return NULL;
  }
  prepared.used = 1;
  slots[slot] = prepared;
  /* The pointers into the slot's own cells, now that it has its place. */
  for (i = 0; i < nvalues; ++i)
    slots[slot].params[i] = &slots[slot].cells[i];
  last_slot = slot;
  return PyLong_FromLong(slot);
}

/* The slot named by an optional first argument, else the last prepared. */
static Prepared *slot_of(PyObject *const *args, Py_ssize_t nargs,
                         Py_ssize_t index) {
  long slot = last_slot;
  if (nargs > index) {
    slot = PyLong_AsLong(args[index]);
    if (slot == -1 && PyErr_Occurred())
      return NULL;
  }
  if (slot < 0 || slot >= MAX_SLOTS || !slots[slot].used) {
    PyErr_SetString(PyExc_ValueError, "no such prepared launch");
    return NULL;
  }
  return &slots[slot];
}

static inline CUresult launch_one(const Prepared *p) {
  return p_cuLaunchKernel(p->function, p->grid[0], p->grid[1], p->grid[2],
                          p->block[0], p->block[1], p->block[2], p->shared,
                          p->stream, (void **)p->params, NULL);
}

/* launch_prepared([slot]): the hot path. No argument is read unless one is
 * given, and the GIL is kept: the least a launch from Python can cost. (A
 * launch into a full queue blocks with the GIL held; a single-threaded
 * benchmark does not mind.) */
static PyObject *launch_prepared(PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs) {
  const Prepared *p;
  CUresult r;
  (void)self;
  if (nargs == 0 && last_slot >= 0)
    p = &slots[last_slot];
  else if (nargs > 1 || !(p = slot_of(args, nargs, 0))) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "launch_prepared([slot])");
    return NULL;
  }
  if ((r = launch_one(p)))
    return raise_cuda("cuLaunchKernel", r);
  Py_RETURN_NONE;
}

/* c_loop(n[, slot]): n launches of a prepared slot from C, the GIL
 * released (nothing of Python is touched inside the loop). */
static PyObject *c_loop(PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs) {
  const Prepared *p;
  PyThreadState *state;
  long long n, k;
  CUresult r = 0;
  (void)self;
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "c_loop(n[, slot])");
    return NULL;
  }
  n = PyLong_AsLongLong(args[0]);
  if (n == -1 && PyErr_Occurred())
    return NULL;
  if (!(p = slot_of(args, nargs, 1)))
    return NULL;
  state = PyEval_SaveThread();
  for (k = 0; k < n; ++k)
    if ((r = launch_one(p)))
      break;
  PyEval_RestoreThread(state);
  if (r)
    return raise_cuda("cuLaunchKernel", r);
  Py_RETURN_NONE;
}

static PyObject *synchronize(PyObject *self, PyObject *unused) {
  PyThreadState *state;
  CUresult r;
  (void)self;
  (void)unused;
  if (open_driver() < 0)
    return NULL;
  state = PyEval_SaveThread();
  r = p_cuCtxSynchronize ? p_cuCtxSynchronize() : p_cuStreamSynchronize(NULL);
  PyEval_RestoreThread(state);
  if (r)
    return raise_cuda("synchronize", r);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"load", load, METH_VARARGS,
     "load(image: bytes, name: str) -> int: a kernel of a PTX or cubin "
     "image, as its CUfunction handle."},
    {"mem_alloc", mem_alloc, METH_O,
     "mem_alloc(nbytes) -> int: device memory, never freed."},
    {"prepare", (PyCFunction)(void (*)(void))prepare,
     METH_VARARGS | METH_KEYWORDS,
     "prepare(function, grid, block, fmt, *values, stream=0, shared=0) -> "
     "slot: packs a launch's parameters once (fmt letters: P pointer, Q/q "
     "64-bit, I/i 32-bit, f float, d double)."},
    {"launch_prepared", (PyCFunction)(void (*)(void))launch_prepared,
     METH_FASTCALL,
     "launch_prepared([slot]): one cuLaunchKernel of a prepared launch "
     "(default: the last prepared)."},
    {"c_loop", (PyCFunction)(void (*)(void))c_loop, METH_FASTCALL,
     "c_loop(n[, slot]): the prepared launch n times from a C loop."},
    {"synchronize", synchronize, METH_NOARGS,
     "synchronize(): cuCtxSynchronize on device 0's primary context."},
    {"driver_error", driver_error, METH_NOARGS,
     "driver_error() -> str or None: why the driver cannot be used, after "
     "trying to open it."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_kjit_raw_launch",
    "Raw cuLaunchKernel floors for bench/python/launch_bench.py.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__kjit_raw_launch(void) {
  return PyModule_Create(&module_def);
}
