# How tensors are read: the DLPack C exchange API (here a table built with
# ctypes, as PyTorch 2.10+ offers one on torch.Tensor), __dlpack__ with
# __dlpack_device__, data_ptr() with a dtype, the buffer protocol (NumPy,
# memoryview), __array_interface__,
# and dtypes standing in for tensors in a warmup. Each launch's result is
# checked against NumPy.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %examples

import ctypes
import os
import sys

import numpy as np

import kjit

examples = sys.argv[1]
add = kjit.load(os.path.join(examples, "vector_add.mlir")).add
n = 1000
grid = (kjit.cdiv(n, 1024),)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


FROM_OBJECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
CURRENT_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                  ctypes.POINTER(ctypes.c_void_p))


class ExchangeAPI(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("prev", ctypes.c_void_p), ("allocator", ctypes.c_void_p),
                ("managed_from", ctypes.c_void_p), ("managed_to", ctypes.c_void_p),
                ("from_object", FROM_OBJECT), ("current_stream", CURRENT_STREAM)]


exchange_calls = []


@FROM_OBJECT
def from_object(address, out):
    tensor = ctypes.cast(address, ctypes.py_object).value
    exchange_calls.append(tensor)
    array = tensor.array
    out[0].data = array.ctypes.data - 8  # the offset is added back
    out[0].byte_offset = 8
    out[0].device = DLDevice(1, 0)  # CPU
    out[0].ndim = 1
    out[0].dtype = DLDataType(2, 32, 1)  # float32
    return 0


@CURRENT_STREAM
def current_stream(device_type, device_id, stream):
    stream[0] = None
    return 0


api = ExchangeAPI(1, 3, None, None, None, None, from_object, current_stream)
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Exchanged:
    """A tensor type with a DLPack exchange table, as torch.Tensor has."""
    __dlpack_c_exchange_api__ = capsule_new(ctypes.addressof(api), b"dlpack_exchange_api", None)

    def __init__(self, array):
        self.array = array


class OnlyDLPack:
    """A tensor offering __dlpack__ and nothing else."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class OnlyArrayInterface:
    """An array offering __array_interface__ alone (no buffer protocol)."""

    def __init__(self, array):
        self.array = array

    @property
    def __array_interface__(self):
        return self.array.__array_interface__


class OnlyDataPtr:
    """A tensor offering data_ptr() and a dtype, as old frameworks do."""

    def __init__(self, array):
        self.array = array
        self.dtype = "mylib." + str(array.dtype)

    def data_ptr(self):
        return self.array.ctypes.data


rng = np.random.default_rng(7)
for wrap in (Exchanged, OnlyDLPack, OnlyArrayInterface, OnlyDataPtr, lambda a: a,
             memoryview):
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add[grid](wrap(x), wrap(y), wrap(out), n)
    np.testing.assert_array_equal(out, x + y, err_msg=str(wrap))
assert len(exchange_calls) == 3, exchange_calls

# A wrong dtype through each protocol is the binder's refusal.
ints = np.zeros(n, np.int32)
for wrap in (OnlyDLPack, OnlyArrayInterface, OnlyDataPtr, memoryview):
    try:
        add[grid](wrap(ints), wrap(ints), wrap(ints), n)
        raise AssertionError("an int32 tensor was accepted")
    except kjit.ArgumentError as error:
        assert "expected a tensor of fp32" in str(error), error

# dtypes stand for tensors in a warmup: kjit's, NumPy's, and one a
# framework spells "torch.float32"; at a constexpr a dtype is a value.


class FrameworkDType:
    """A framework dtype object (its type is called dtype)."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


FrameworkDType.__name__ = "dtype"
for stand_in in (kjit.float32, np.dtype("float32"), FrameworkDType("torch.float32")):
    record = add.warmup(stand_in, stand_in, stand_in, n)
    assert record["signature"]["x"] == "*kfp32", record
try:
    add.warmup(FrameworkDType("torch.complex32"), kjit.float32, kjit.float32, n)
    raise AssertionError("an unknown dtype was accepted")
except kjit.ArgumentError as error:
    assert "dtype 'torch.complex32' has no kjit equivalent" in str(error), error
assert kjit.bfloat16 == kjit.dtype("bf16") and kjit.bfloat16.name == "bf16"
assert repr(kjit.float16) == "kjit.dtype('fp16')"
print("protocols: OK")
