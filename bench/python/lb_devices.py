"""The devices launch_bench.py runs on: where the tensors live, and how to
make, check and synchronize them.

  TorchDevice    torch tensors on cuda:0 (kjit's cuda backend, Triton) or on
                 the CPU (the host backend)
  NumpyDevice    NumPy arrays on the host backend, where torch is absent
  RawCudaDevice  bare device memory from _kjit_raw_launch, read by kjit
                 through __cuda_array_interface__: CUDA launches with
                 neither torch nor Triton (section 1 only)

Each offers what the sections use: empty/rand/zero, the reference results
(add_reference, softmax_reference) and launches (..._launch), equal,
max_abs_diff, sync, stream, data_ptr; `reference` names the reference
implementation ("torch", "numpy", or None).
"""

from lb_common import error_text


class TorchDevice:
    """torch tensors on cuda:0 or the CPU (the host backend runs those)."""

    def __init__(self, kind):
        import torch
        self.torch = torch
        self.kind = kind
        self.is_cuda = kind == "cuda"
        self.name = "torch-" + kind
        self.reference = "torch"
        if self.is_cuda:
            torch.cuda.init()
            torch.empty(1, device="cuda")  # the primary context, now
            torch.cuda.synchronize()

    def describe(self):
        if self.is_cuda:
            return self.torch.cuda.get_device_name(0)
        return "cpu"

    def empty(self, *shape):
        return self.torch.empty(*shape, device=self.kind)

    def rand(self, *shape, seed=0):
        generator = self.torch.Generator(device=self.kind).manual_seed(seed)
        return self.torch.rand(*shape, generator=generator, device=self.kind)

    def zero(self, t):
        t.zero_()

    def add_reference(self, x, y):
        return x + y

    def softmax_reference(self, a):
        return self.torch.softmax(a, dim=1)

    def add_reference_launch(self, x, y, out):
        """One launch of the reference, for timing."""
        torch = self.torch
        return lambda: torch.add(x, y, out=out)

    def softmax_reference_launch(self, a, out):
        torch = self.torch
        return lambda: torch.softmax(a, dim=1)

    def copy_launch(self, a, out):
        return lambda: out.copy_(a)

    def equal(self, a, b):
        return bool(self.torch.equal(a, b))

    def max_abs_diff(self, a, b):
        return float((a.double() - b.double()).abs().max())

    def sync(self):
        if self.is_cuda:
            self.torch.cuda.synchronize()

    def stream(self):
        return self.torch.cuda.current_stream().cuda_stream if self.is_cuda else 0

    def data_ptr(self, t):
        return t.data_ptr()


class NumpyDevice:
    """NumPy arrays on the host backend: where torch is absent."""

    is_cuda = False
    name = "numpy-cpu"
    reference = "numpy"

    def __init__(self):
        import numpy
        self.np = numpy

    def describe(self):
        return "cpu"

    def empty(self, *shape):
        return self.np.zeros(shape, self.np.float32)

    def rand(self, *shape, seed=0):
        return self.np.random.default_rng(seed).random(shape, dtype=self.np.float32)

    def zero(self, t):
        t[...] = 0

    def add_reference(self, x, y):
        return x + y

    def softmax_reference(self, a):
        shifted = a - a.max(axis=1, keepdims=True)
        e = self.np.exp(shifted)
        return e / e.sum(axis=1, keepdims=True)

    def add_reference_launch(self, x, y, out):
        np = self.np
        return lambda: np.add(x, y, out=out)

    def softmax_reference_launch(self, a, out):
        return lambda: self.softmax_reference(a)

    def copy_launch(self, a, out):
        np = self.np
        return lambda: np.copyto(out, a)

    def equal(self, a, b):
        return bool(self.np.array_equal(a, b))

    def max_abs_diff(self, a, b):
        return float(self.np.abs(a.astype(self.np.float64) - b).max())

    def sync(self):
        pass

    def stream(self):
        return 0

    def data_ptr(self, t):
        return t.ctypes.data


class DeviceBuffer:
    """Bare device memory with __cuda_array_interface__, which kjit reads
    as it reads CuPy's arrays: a CUDA tensor without torch."""

    def __init__(self, pointer, count):
        self.pointer = pointer
        self.count = count

    # A property, as CuPy's: kjit looks for the interface on the type.
    @property
    def __cuda_array_interface__(self):
        return {"version": 3, "shape": (self.count,), "typestr": "<f4",
                "data": (self.pointer, False), "strides": None,
                "stream": None}


class RawCudaDevice:
    """Device memory from the raw extension: launches on CUDA with neither
    torch nor Triton (only the launch section runs)."""

    is_cuda = True
    name = "raw-cuda"
    reference = None

    def __init__(self, raw):
        self.raw = raw
        error = raw.driver_error()
        if error:
            raise RuntimeError(error)

    def describe(self):
        return "cuda (no torch)"

    def empty(self, *shape):
        count = 1
        for extent in shape:
            count *= extent
        return DeviceBuffer(self.raw.mem_alloc(max(4 * count, 4)), count)

    def sync(self):
        self.raw.synchronize()

    def stream(self):
        return 0

    def data_ptr(self, t):
        return t.pointer


def open_device(choice, raw):
    """The device for `choice` (auto, cuda, cpu) and, for auto, what was
    given up on the way, as notes."""
    notes = []
    try:
        import torch
    except Exception as exc:  # torch absent or broken
        torch = None
        notes.append("torch: " + error_text(exc))
    if choice in ("auto", "cuda"):
        if torch is not None:
            try:
                if torch.cuda.is_available():
                    return TorchDevice("cuda"), notes
                notes.append("torch: CUDA is not available")
            except Exception as exc:
                notes.append("torch CUDA: " + error_text(exc))
        if raw is not None:
            try:
                return RawCudaDevice(raw), notes
            except Exception as exc:
                notes.append("raw driver: " + error_text(exc))
        if choice == "cuda":
            raise RuntimeError("no CUDA device: " + "; ".join(notes))
    if torch is not None:
        return TorchDevice("cpu"), notes
    return NumpyDevice(), notes
