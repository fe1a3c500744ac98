//===- Values.cpp - Python objects as launch values -----------------------===//
//
// Scalars map to kjit's launch values directly; a tensor is read through
// the cheapest protocol its type offers (docs/Python.md, "How arguments map
// to the binder"): the DLPack C exchange API (a C call, no Python object
// made), __cuda_array_interface__, __array_interface__, __dlpack__, and
// data_ptr(). What a type offers is looked up once and cached.
//
//===----------------------------------------------------------------------===//

#include "Extension.h"

#include "kjit/Model/DType.h"
#include "kjit/Support/StrCat.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace kjit::python {
namespace {

// The DLPack structures kjit reads (DLPack 1.x; layout from the DLPack
// specification). Only the fields used here are named.
struct DLDevice {
  int32_t deviceType;
  int32_t deviceId;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byteOffset;
};
struct DLManagedTensor {
  DLTensor tensor;
  void *managerContext;
  void (*deleter)(DLManagedTensor *);
};
struct DLPackVersion {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *managerContext;
  void (*deleter)(DLManagedTensorVersioned *);
  uint64_t flags;
  DLTensor tensor;
};
struct DLPackExchangeAPI {
  DLPackVersion version;
  void *previous;
  void *allocator;
  void *managedFromObject;
  void *managedToObject;
  int (*tensorFromObject)(void *object, DLTensor *out);
  int (*currentStream)(int32_t deviceType, int32_t deviceId, void **stream);
};
constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;
constexpr uint64_t kDLReadOnly = 1;

/// The protocols a type offers, found once per type.
enum Protocol : uint8_t {
  kExchange = 1,
  kCudaArrayInterface = 2,
  kArrayInterface = 4,
  kDLPack = 8,
  kDataPtr = 16,
  kDTypeLike = 32,
  /// The buffer protocol (NumPy arrays, memoryview, array.array): a C call
  /// that fills a struct, far cheaper than building __array_interface__'s
  /// dict.
  kBuffer = 64,
  /// A NumPy scalar (numpy.int32(5)): it offers both of the above but is a
  /// value, not memory, and is read through item().
  kNumpyScalar = 128,
};
struct TypeEntry {
  PyTypeObject *type;
  uint8_t protocols;
  const DLPackExchangeAPI *api;
};
/// A handful of types is all a process launches with; read under the GIL.
/// A deque: an entry stays where it is while a later one is added (reading
/// a NumPy scalar reads its item, which may add one).
std::deque<TypeEntry> typeCache;

const DLPackExchangeAPI *exchangeApiOf(PyTypeObject *type) {
  for (const char *name :
       {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
    PyObject *value = PyObject_GetAttrString((PyObject *)type, name);
    if (!value) {
      PyErr_Clear();
      continue;
    }
    // A capsule (PyTorch: "dlpack_exchange_api"), or an int as the DLPack
    // specification first described it.
    void *pointer = nullptr;
    if (PyCapsule_CheckExact(value))
      pointer = PyCapsule_GetPointer(value, PyCapsule_GetName(value));
    else if (PyLong_Check(value))
      pointer = PyLong_AsVoidPtr(value);
    Py_DECREF(value);
    if (!pointer) {
      PyErr_Clear();
      continue;
    }
    auto *api = static_cast<const DLPackExchangeAPI *>(pointer);
    if (api->version.major == 1 && api->tensorFromObject && api->currentStream)
      return api;
  }
  return nullptr;
}

bool typeHas(PyTypeObject *type, const char *name) {
  int has = PyObject_HasAttrString((PyObject *)type, name);
  return has == 1;
}

bool isNumpyScalarType(PyTypeObject *type);
bool offersBuffer(PyObject *object);

const TypeEntry &entryFor(PyObject *object) {
  PyTypeObject *type = Py_TYPE(object);
  for (const TypeEntry &entry : typeCache)
    if (entry.type == type)
      return entry;
  TypeEntry entry{type, 0, exchangeApiOf(type)};
  if (isNumpyScalarType(type))
    entry.protocols |= kNumpyScalar;
  else if (offersBuffer(object))
    entry.protocols |= kBuffer;
  if (entry.api)
    entry.protocols |= kExchange;
  if (typeHas(type, "__cuda_array_interface__"))
    entry.protocols |= kCudaArrayInterface;
  if (typeHas(type, "__array_interface__"))
    entry.protocols |= kArrayInterface;
  if (typeHas(type, "__dlpack__") && typeHas(type, "__dlpack_device__"))
    entry.protocols |= kDLPack;
  if (typeHas(type, "data_ptr"))
    entry.protocols |= kDataPtr;
  // torch.dtype and numpy.dtype: a type called dtype, or (NumPy 2's
  // Float32DType, 1.x's dtype[float32]) derived from one, whose str() is a
  // dtype's name.
  if (PyObject *mro = PyObject_GetAttrString((PyObject *)type, "__mro__")) {
    for (Py_ssize_t i = 0; PyTuple_Check(mro) && i < PyTuple_Size(mro); ++i) {
      PyObject *name =
          PyObject_GetAttrString(PyTuple_GetItem(mro, i), "__name__");
      if (name && PyUnicode_Check(name) &&
          PyUnicode_CompareWithASCIIString(name, "dtype") == 0)
        entry.protocols |= kDTypeLike;
      Py_XDECREF(name);
    }
    Py_DECREF(mro);
  }
  PyErr_Clear();
  // The cache keeps the type alive, so its address is never reused.
  Py_INCREF((PyObject *)type);
  typeCache.push_back(entry);
  return typeCache.back();
}

std::optional<rt::DType> dtypeFromDLPack(DLDataType type) {
  if (type.lanes != 1)
    return std::nullopt;
  using rt::DType;
  switch (type.code) {
  case 0: // int
    switch (type.bits) {
    case 8:
      return DType::I8;
    case 16:
      return DType::I16;
    case 32:
      return DType::I32;
    case 64:
      return DType::I64;
    }
    break;
  case 1: // uint
    switch (type.bits) {
    case 8:
      return DType::U8;
    case 16:
      return DType::U16;
    case 32:
      return DType::U32;
    case 64:
      return DType::U64;
    }
    break;
  case 2: // float
    switch (type.bits) {
    case 16:
      return DType::FP16;
    case 32:
      return DType::FP32;
    case 64:
      return DType::FP64;
    }
    break;
  case 4: // bfloat
    if (type.bits == 16)
      return DType::BF16;
    break;
  case 6: // bool
    if (type.bits == 8)
      return DType::I1;
    break;
  }
  return std::nullopt;
}

/// An array interface's typestr ("<f4", "|b1").
std::optional<rt::DType> dtypeFromTypestr(std::string_view text) {
  if (text.size() < 3 || text[0] == '>')
    return std::nullopt;
  char kind = text[1];
  std::string_view size = text.substr(2);
  using rt::DType;
  if (kind == 'f')
    return size == "2"   ? std::optional(DType::FP16)
           : size == "4" ? std::optional(DType::FP32)
           : size == "8" ? std::optional(DType::FP64)
                         : std::nullopt;
  if (kind == 'i')
    return size == "1"   ? std::optional(DType::I8)
           : size == "2" ? std::optional(DType::I16)
           : size == "4" ? std::optional(DType::I32)
           : size == "8" ? std::optional(DType::I64)
                         : std::nullopt;
  if (kind == 'u')
    return size == "1"   ? std::optional(DType::U8)
           : size == "2" ? std::optional(DType::U16)
           : size == "4" ? std::optional(DType::U32)
           : size == "8" ? std::optional(DType::U64)
                         : std::nullopt;
  if (kind == 'b' && size == "1")
    return DType::I1;
  return std::nullopt;
}

/// What reading a tensor found.
struct Tensor {
  uint64_t address = 0;
  rt::DType dtype = rt::DType::I8;
  bool readOnly = false;
  Target target = Target::Host;
  int32_t device = 0;
  const DLPackExchangeAPI *api = nullptr;
};

std::string describeParam(Py_ssize_t param, std::string_view name) {
  if (param < 0)
    return kjit::strCat("argument '", name, "'");
  return kjit::strCat("argument '", name, "' (at ", param, ")");
}

bool unsupportedDtype(Py_ssize_t param, std::string_view name,
                      std::string_view what) {
  PyErr_Format(ArgumentErrorType,
               "%s: a tensor of %s, which kjit cannot launch with",
               describeParam(param, name).c_str(), std::string(what).c_str());
  return false;
}

bool fromDLTensor(const DLTensor &dl, Py_ssize_t param, std::string_view name,
                  Tensor &out) {
  std::optional<rt::DType> dtype = dtypeFromDLPack(dl.dtype);
  if (!dtype)
    return unsupportedDtype(param, name,
                            kjit::strCat("DLPack type code ", dl.dtype.code,
                                         ", ", dl.dtype.bits, " bits, ",
                                         dl.dtype.lanes, " lanes"));
  out.dtype = *dtype;
  out.address = reinterpret_cast<uint64_t>(dl.data) + dl.byteOffset;
  out.device = dl.device.deviceId;
  switch (dl.device.deviceType) {
  case kDLCPU:
  case kDLCUDAHost:
    out.target = Target::Host;
    out.device = 0;
    return true;
  case kDLCUDA:
  case kDLCUDAManaged:
    out.target = Target::Cuda;
    return true;
  }
  PyErr_Format(ArgumentErrorType,
               "%s: a tensor on DLPack device type %d, which kjit cannot "
               "launch on (it runs on the CPU and on CUDA devices)",
               describeParam(param, name).c_str(), (int)dl.device.deviceType);
  return false;
}

/// (address, read-only) of an array interface's "data" entry, and its
/// dtype; `cuda` for __cuda_array_interface__.
bool fromArrayInterface(PyObject *interface, bool cuda, Py_ssize_t param,
                        std::string_view name, Tensor &out) {
  if (!PyDict_Check(interface)) {
    PyErr_Format(ArgumentErrorType, "%s: its array interface is not a dict",
                 describeParam(param, name).c_str());
    return false;
  }
  PyObject *data = PyDict_GetItemString(interface, "data");
  PyObject *typestr = PyDict_GetItemString(interface, "typestr");
  if (!data || !PyTuple_Check(data) || PyTuple_Size(data) != 2 || !typestr ||
      !PyUnicode_Check(typestr)) {
    PyErr_Format(ArgumentErrorType,
                 "%s: its array interface has no (pointer, read-only) 'data' "
                 "or no 'typestr'",
                 describeParam(param, name).c_str());
    return false;
  }
  unsigned long long address =
      PyLong_AsUnsignedLongLong(PyTuple_GetItem(data, 0));
  if (PyErr_Occurred())
    return false;
  int readOnly = PyObject_IsTrue(PyTuple_GetItem(data, 1));
  Py_ssize_t size = 0;
  const char *text = PyUnicode_AsUTF8AndSize(typestr, &size);
  if (!text || readOnly < 0)
    return false;
  std::optional<rt::DType> dtype = dtypeFromTypestr({text, (size_t)size});
  if (!dtype)
    return unsupportedDtype(
        param, name,
        kjit::strCat("typestr '", std::string_view(text, size), "'"));
  out.address = address;
  out.dtype = *dtype;
  out.readOnly = readOnly == 1;
  out.target = cuda ? Target::Cuda : Target::Host;
  out.device = 0;
  return true;
}

/// __dlpack__(): a capsule owning a copy of the tensor's description.
bool fromDLPackCapsule(PyObject *object, Py_ssize_t param,
                       std::string_view name, Tensor &out) {
  PyObject *capsule = PyObject_CallMethod(object, "__dlpack__", nullptr);
  if (!capsule)
    return false;
  bool ok = false;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto *managed = static_cast<DLManagedTensorVersioned *>(
        PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    ok = fromDLTensor(managed->tensor, param, name, out);
    out.readOnly = (managed->flags & kDLReadOnly) != 0;
    // Consumed: the capsule is renamed so that its destructor does not
    // free it again, and the producer is told through the deleter.
    PyCapsule_SetName(capsule, "used_dltensor_versioned");
    if (managed->deleter)
      managed->deleter(managed);
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto *managed = static_cast<DLManagedTensor *>(
        PyCapsule_GetPointer(capsule, "dltensor"));
    ok = fromDLTensor(managed->tensor, param, name, out);
    PyCapsule_SetName(capsule, "used_dltensor");
    if (managed->deleter)
      managed->deleter(managed);
  } else {
    PyErr_Format(ArgumentErrorType,
                 "%s: __dlpack__() did not return a DLPack capsule",
                 describeParam(param, name).c_str());
  }
  Py_DECREF(capsule);
  return ok;
}

/// data_ptr() with the dtype's name (a tensor type without the other
/// protocols); its device from `device.type`/`device.index` when it has one.
bool fromDataPtr(PyObject *object, Py_ssize_t param, std::string_view name,
                 Tensor &out) {
  PyObject *pointer = PyObject_CallMethod(object, "data_ptr", nullptr);
  if (!pointer)
    return false;
  out.address = PyLong_AsUnsignedLongLong(pointer);
  Py_DECREF(pointer);
  if (PyErr_Occurred())
    return false;
  PyObject *dtype = PyObject_GetAttrString(object, "dtype");
  PyObject *text = dtype ? PyObject_Str(dtype) : nullptr;
  Py_XDECREF(dtype);
  if (!text)
    return false;
  const char *chars = PyUnicode_AsUTF8AndSize(text, nullptr);
  std::optional<rt::DType> parsed =
      chars ? rt::parseDType(chars) : std::nullopt;
  std::string spelled = chars ? chars : "?";
  Py_DECREF(text);
  if (!parsed)
    return unsupportedDtype(param, name, spelled);
  out.dtype = *parsed;
  out.target = Target::Host;
  PyObject *device = PyObject_GetAttrString(object, "device");
  if (!device) {
    PyErr_Clear();
    return true;
  }
  PyObject *type = PyObject_GetAttrString(device, "type");
  PyObject *index = PyObject_GetAttrString(device, "index");
  Py_DECREF(device);
  PyErr_Clear();
  if (type && PyUnicode_Check(type) &&
      PyUnicode_CompareWithASCIIString(type, "cuda") == 0) {
    out.target = Target::Cuda;
    out.device =
        index && PyLong_Check(index) ? (int32_t)PyLong_AsLong(index) : 0;
  }
  Py_XDECREF(type);
  Py_XDECREF(index);
  return true;
}

/// Whether `type` is a NumPy scalar type (numpy.generic's subclass).
bool isNumpyScalarType(PyTypeObject *type) {
  PyObject *modules = PyImport_GetModuleDict();
  PyObject *numpy = modules ? PyDict_GetItemString(modules, "numpy") : nullptr;
  if (!numpy)
    return false;
  PyObject *generic = PyObject_GetAttrString(numpy, "generic");
  if (!generic) {
    PyErr_Clear();
    return false;
  }
  int is = PyObject_IsSubclass((PyObject *)type, generic);
  Py_DECREF(generic);
  if (is < 0)
    PyErr_Clear();
  return is == 1;
}

// The buffer protocol joined the limited API in 3.11; its struct and entry
// points have had this form since Python 3.0, and every interpreter exports
// them, so a 3.10 abi3 module finds them at run time.
struct BufferView {
  void *buf;
  PyObject *obj;
  Py_ssize_t len;
  Py_ssize_t itemsize;
  int readonly;
  int ndim;
  char *format;
  Py_ssize_t *shape;
  Py_ssize_t *strides;
  Py_ssize_t *suboffsets;
  void *internal;
};
/// PyBUF_ND | PyBUF_FORMAT: C-contiguous, typed (a strided view is read
/// through its array interface instead).
constexpr int kBufferFormat = 0x0008 | 0x0004;
using GetBuffer = int (*)(PyObject *, BufferView *, int);
using ReleaseBuffer = void (*)(BufferView *);
GetBuffer getBuffer = nullptr;
ReleaseBuffer releaseBuffer = nullptr;

bool offersBuffer(PyObject *object) {
  if (!getBuffer) {
    getBuffer =
        reinterpret_cast<GetBuffer>(dlsym(RTLD_DEFAULT, "PyObject_GetBuffer"));
    releaseBuffer = reinterpret_cast<ReleaseBuffer>(
        dlsym(RTLD_DEFAULT, "PyBuffer_Release"));
    if (!getBuffer || !releaseBuffer) {
      getBuffer = nullptr;
      return false;
    }
  }
  BufferView view;
  if (getBuffer(object, &view, kBufferFormat) != 0) {
    PyErr_Clear();
    return false;
  }
  releaseBuffer(&view);
  return true;
}

/// A struct-module format ("f", "<i", "?") with its item size.
std::optional<rt::DType> dtypeFromFormat(const char *format, Py_ssize_t size) {
  if (!format)
    format = "B";
  if (*format == '<' || *format == '=' || *format == '@')
    ++format;
  if (format[0] == 0 || format[1] != 0)
    return std::nullopt; // big-endian, or not one scalar
  using rt::DType;
  char kind = format[0];
  if (kind == 'e' || kind == 'f' || kind == 'd')
    return size == 2   ? std::optional(DType::FP16)
           : size == 4 ? std::optional(DType::FP32)
           : size == 8 ? std::optional(DType::FP64)
                       : std::nullopt;
  if (kind == '?')
    return size == 1 ? std::optional(DType::I1) : std::nullopt;
  bool isSigned = kind == 'b' || kind == 'h' || kind == 'i' || kind == 'l' ||
                  kind == 'q' || kind == 'n';
  bool isUnsigned = kind == 'B' || kind == 'H' || kind == 'I' || kind == 'L' ||
                    kind == 'Q' || kind == 'N';
  if (!isSigned && !isUnsigned)
    return std::nullopt;
  switch (size) {
  case 1:
    return isSigned ? DType::I8 : DType::U8;
  case 2:
    return isSigned ? DType::I16 : DType::U16;
  case 4:
    return isSigned ? DType::I32 : DType::U32;
  case 8:
    return isSigned ? DType::I64 : DType::U64;
  }
  return std::nullopt;
}

/// Reads host memory through the buffer protocol; 0 (no exception) when
/// this object does not give a contiguous typed buffer, so that the next
/// protocol is tried.
int fromBuffer(PyObject *object, Py_ssize_t param, std::string_view name,
               Tensor &out) {
  BufferView view;
  if (getBuffer(object, &view, kBufferFormat) != 0) {
    PyErr_Clear();
    return 0;
  }
  std::optional<rt::DType> dtype = dtypeFromFormat(view.format, view.itemsize);
  std::string format = view.format ? view.format : "B";
  out.address = reinterpret_cast<uint64_t>(view.buf);
  out.readOnly = view.readonly != 0;
  out.target = Target::Host;
  out.device = 0;
  releaseBuffer(&view);
  if (!dtype)
    return unsupportedDtype(param, name,
                            kjit::strCat("buffer format '", format, "'"))
               ? 1
               : -1;
  out.dtype = *dtype;
  return 1;
}

/// Reads a tensor through the protocols `entry` lists, in order; a
/// protocol whose attribute raises AttributeError for this object (torch's
/// __cuda_array_interface__ on a CPU tensor) passes to the next.
int readTensor(PyObject *object, const TypeEntry &entry, Py_ssize_t param,
               std::string_view name, Tensor &out) {
  if (entry.protocols & kExchange) {
    DLTensor dl;
    if (entry.api->tensorFromObject(object, &dl) != 0)
      return -1;
    out.api = entry.api;
    return fromDLTensor(dl, param, name, out) ? 1 : -1;
  }
  if (entry.protocols & kBuffer)
    if (int read = fromBuffer(object, param, name, out))
      return read;
  for (auto [protocol, attribute] :
       {std::pair{kCudaArrayInterface, "__cuda_array_interface__"},
        std::pair{kArrayInterface, "__array_interface__"}}) {
    if (!(entry.protocols & protocol))
      continue;
    PyObject *interface = PyObject_GetAttrString(object, attribute);
    if (!interface) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
      PyErr_Clear();
      continue;
    }
    bool ok = fromArrayInterface(interface, protocol == kCudaArrayInterface,
                                 param, name, out);
    Py_DECREF(interface);
    if (ok && protocol == kCudaArrayInterface) {
      // CuPy arrays say which device they are on.
      if (PyObject *device = PyObject_GetAttrString(object, "device")) {
        PyObject *id = PyObject_GetAttrString(device, "id");
        if (id && PyLong_Check(id))
          out.device = (int32_t)PyLong_AsLong(id);
        Py_XDECREF(id);
        Py_DECREF(device);
      }
      PyErr_Clear();
    }
    return ok ? 1 : -1;
  }
  if (entry.protocols & kDLPack)
    return fromDLPackCapsule(object, param, name, out) ? 1 : -1;
  if (entry.protocols & kDataPtr)
    return fromDataPtr(object, param, name, out) ? 1 : -1;
  return 0;
}

bool isConstexprParam(const ReadContext &context, Py_ssize_t param) {
  return context.manifest && param >= 0 &&
         (size_t)param < context.manifest->params.size() &&
         context.manifest->params[param].isConstexpr;
}

/// Whether the parameter at `param` (or, for a keyword, called `name`) is
/// declared kjit.const; false for a name that is no parameter (the binder
/// names it).
bool isConstParam(const ReadContext &context, Py_ssize_t param,
                  std::string_view name) {
  if (!context.manifest)
    return false;
  const std::vector<rt::KernelParam> &params = context.manifest->params;
  if (param >= 0)
    return (size_t)param < params.size() && params[param].isConst;
  for (const rt::KernelParam &candidate : params)
    if (candidate.name == name)
      return candidate.isConst;
  return false;
}

bool readDTypeLike(PyObject *object, rt::DType &out) {
  PyObject *text = PyObject_Str(object);
  if (!text)
    return false;
  const char *chars = PyUnicode_AsUTF8AndSize(text, nullptr);
  std::optional<rt::DType> dtype = chars ? rt::parseDType(chars) : std::nullopt;
  if (!dtype)
    PyErr_Format(ArgumentErrorType, "dtype '%s' has no kjit equivalent",
                 chars ? chars : "?");
  Py_DECREF(text);
  if (dtype)
    out = *dtype;
  return dtype.has_value();
}

bool readInt(PyObject *object, rt::Argument &out) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (!overflow) {
    if (value == -1 && PyErr_Occurred())
      return false;
    out = rt::Argument::integer(value);
    return true;
  }
  // Beyond 64 bits: through the decimal text, so that the binder can name
  // the value it refuses.
  PyObject *text = PyObject_Str(object);
  if (!text)
    return false;
  const char *chars = PyUnicode_AsUTF8AndSize(text, nullptr);
  std::optional<rt::Int128> wide =
      chars ? rt::parseInt128(chars) : std::nullopt;
  if (!wide)
    PyErr_Format(ArgumentErrorType,
                 "integer %s does not fit in 128 bits, let alone a kernel "
                 "parameter",
                 chars ? chars : "?");
  Py_DECREF(text);
  if (wide)
    out = rt::Argument::integer(*wide);
  return wide.has_value();
}

} // namespace

bool readValue(PyObject *object, Py_ssize_t param, std::string_view name,
               const ReadContext &context, rt::Argument &out) {
  if (object == Py_None) {
    out = rt::Argument::none();
    return true;
  }
  if (object == Py_True || object == Py_False) {
    out = rt::Argument::boolean(object == Py_True);
    return true;
  }
  if (PyLong_Check(object))
    return readInt(object, out);
  if (PyFloat_Check(object)) {
    out = rt::Argument::fp(PyFloat_AsDouble(object));
    return true;
  }
  PyTypeObject *type = Py_TYPE(object);
  rt::DType dtype = rt::DType::I8;
  if (type == DTypeType) {
    dtype = dtypeOf(object);
  } else {
    const TypeEntry &entry = entryFor(object);
    if (entry.protocols & kDTypeLike) {
      if (!readDTypeLike(object, dtype))
        return false;
    } else if (entry.protocols & ~kDTypeLike) {
      if (entry.protocols & kNumpyScalar) {
        PyObject *item = PyObject_CallMethod(object, "item", nullptr);
        if (!item)
          return false;
        bool ok = readValue(item, param, name, context, out);
        Py_DECREF(item);
        return ok;
      }
      Tensor tensor;
      int read = readTensor(object, entry, param, name, tensor);
      if (read < 0)
        return false;
      if (read > 0) {
        // Read-only memory (a bytes object, a read-only mapping) at a
        // parameter the kernel may store through would be written: only a
        // kjit.const parameter takes it. The binder then needs no flag: a
        // const parameter's type is a const pointer anyway.
        if (tensor.readOnly && !isConstParam(context, param, name)) {
          PyErr_Format(ArgumentErrorType,
                       "%s: a read-only tensor for a parameter the kernel may "
                       "write (it is not kjit.const)",
                       describeParam(param, name).c_str());
          return false;
        }
        out = rt::Argument::tensor(tensor.address, tensor.dtype);
        Placement &placement = *context.placement;
        if (!placement.any) {
          placement.any = true;
          placement.target = tensor.target;
          placement.device = tensor.device;
          placement.firstIndex = param;
          if (tensor.api && tensor.target == Target::Cuda) {
            void *stream = nullptr;
            if (tensor.api->currentStream(kDLCUDA, tensor.device, &stream) != 0)
              return false;
            placement.haveStream = true;
            placement.stream = reinterpret_cast<uint64_t>(stream);
          }
        } else if (placement.target != tensor.target ||
                   placement.device != tensor.device) {
          PyErr_Format(ArgumentErrorType,
                       "%s is on %s:%d, but the launch's first tensor is on "
                       "%s:%d: every tensor of a launch must be on one device",
                       describeParam(param, name).c_str(),
                       targetName(tensor.target), (int)tensor.device,
                       targetName(placement.target), (int)placement.device);
          return false;
        }
        return true;
      }
    }
    if (!(entry.protocols & kDTypeLike)) {
      if (PyCallable_Check(object)) {
        out = rt::Argument::callable(object);
        return true;
      }
      PyObject *typeName = PyObject_GetAttrString((PyObject *)type, "__name__");
      const char *text =
          typeName ? PyUnicode_AsUTF8AndSize(typeName, nullptr) : nullptr;
      PyErr_Format(ArgumentErrorType,
                   "%s: an object of type '%s' is not a launch value (an int, "
                   "float, bool, None, dtype, or a tensor or array)",
                   describeParam(param, name).c_str(), text ? text : "?");
      Py_XDECREF(typeName);
      return false;
    }
  }
  // A dtype: a constexpr value, or in a warmup a dtype-only tensor.
  if (context.mock && !isConstexprParam(context, param))
    out = rt::Argument::mockTensor(dtype);
  else
    out = rt::Argument::dtypeValue(dtype);
  return true;
}

PyObject *valueToPython(const rt::Argument &value) {
  switch (value.kind()) {
  case rt::ArgKind::None:
    Py_RETURN_NONE;
  case rt::ArgKind::Bool:
    return PyBool_FromLong(value.asBool());
  case rt::ArgKind::Int: {
    rt::Int128 v = value.asInt();
    if (v >= INT64_MIN && v <= INT64_MAX)
      return PyLong_FromLongLong((long long)v);
    std::string text = rt::int128ToString(v);
    return PyLong_FromString(text.c_str(), nullptr, 10);
  }
  case rt::ArgKind::Float:
    return PyFloat_FromDouble(value.asFloat());
  case rt::ArgKind::Tensor:
    return PyLong_FromUnsignedLongLong(value.address());
  case rt::ArgKind::DType: {
    std::string name(rt::canonicalName(value.dtype()));
    return PyObject_CallFunction((PyObject *)DTypeType, "s", name.c_str());
  }
  case rt::ArgKind::Callable:
    break;
  }
  Py_RETURN_NONE;
}

bool readStream(PyObject *object, uint64_t &stream) {
  if (PyLong_Check(object)) {
    stream = PyLong_AsUnsignedLongLong(object);
    return !PyErr_Occurred();
  }
  for (const char *attribute : {"cuda_stream", "ptr"}) {
    PyObject *handle = PyObject_GetAttrString(object, attribute);
    if (!handle) {
      PyErr_Clear();
      continue;
    }
    stream = PyLong_Check(handle) ? PyLong_AsUnsignedLongLong(handle) : 0;
    bool ok = PyLong_Check(handle) && !PyErr_Occurred();
    Py_DECREF(handle);
    if (ok)
      return true;
  }
  PyErr_SetString(ArgumentErrorType,
                  "stream= must be a stream handle (an int) or a stream object "
                  "with 'cuda_stream' (torch) or 'ptr' (CuPy)");
  return false;
}

namespace {
using IsCapturing = int (*)(void *, int *);
IsCapturing isCapturing = nullptr;
} // namespace

void findCaptureQuery() {
  // The driver the cuda backend opened: libcuda.so.1, or the file
  // KJIT_CUDA_DRIVER names (a test's fake driver). Looked up once, after
  // the cuda runtime is made; without it nothing can capture.
  const char *named = std::getenv("KJIT_CUDA_DRIVER");
  void *driver =
      dlopen(named && *named ? named : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver)
    isCapturing =
        reinterpret_cast<IsCapturing>(dlsym(driver, "cuStreamIsCapturing"));
}

bool streamIsCapturing(uint64_t stream) {
  if (!isCapturing)
    return false;
  int status = 0;
  switch (isCapturing(reinterpret_cast<void *>(stream), &status)) {
  case 0:
    return status != 0; // active, or invalidated by someone else
  // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and _IMPLICIT: the legacy stream
  // asked while another stream captures in the global mode, where loading
  // a module would break that capture too.
  case 900:
  case 906:
    return true;
  default:
    return false;
  }
}

} // namespace kjit::python
