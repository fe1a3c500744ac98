"""kjit kernels as PyTorch operators (docs/Python.md, "torch.compile").

    op = kjit.torch.custom_op(mod.add, "mylib::kjit_add",
                              grid=lambda meta: (kjit.cdiv(meta["n"], 1024),))
    op(x, y, out, n)        # eager: the kernel's launch
    torch.compile(f, fullgraph=True)   # f calls op: one graph, no break

The operator's schema comes from the kernel's parameters: a pointer
parameter is a Tensor, mutated (Tensor(a!)) unless the kernel declares it
kjit.const; an integer is SymInt, a float float, a bool bool; constexprs are
fixed by `constexprs` (not operator arguments). The fake implementation does
nothing: a kjit kernel writes into tensors it is given.
"""

import torch as _torch

_libraries = []
_SCALARS = {"i1": "bool", "fp16": "float", "bf16": "float", "fp32": "float",
            "fp64": "float"}


def _schema(kernel, constexprs):
    parts, names, mutated = [], [], []
    for param in kernel.params:
        if param.get("constexpr"):
            continue
        name, kind = param["name"], param["type"]
        names.append(name)
        if kind.startswith("*"):
            if param.get("const"):
                parts.append(f"Tensor {name}")
            else:
                parts.append(f"Tensor(a{len(mutated)}!) {name}")
                mutated.append(name)
        else:
            parts.append(f"{_SCALARS.get(kind, 'SymInt')} {name}")
    return "(" + ", ".join(parts) + ") -> ()", names, mutated


def custom_op(kernel, name, grid, constexprs=None, **launch_options):
    """Registers `kernel` as the operator `name` ("namespace::op") through
    torch.library's define/impl, and returns the operator. `grid` is what
    kernel[grid] takes; `constexprs` and `launch_options` (num_warps=...)
    are passed to every launch."""
    namespace, _, opname = name.partition("::")
    if not namespace or not opname:
        raise ValueError("custom_op name must be 'namespace::op'")
    constexprs = dict(constexprs or {})
    schema, names, _ = _schema(kernel, constexprs)
    library = _torch.library.Library(namespace, "FRAGMENT")
    library.define(opname + schema)
    launcher = kernel[grid]
    fixed = dict(constexprs, **launch_options)

    def launch(*args):
        launcher(*args, **fixed)

    def fake(*args):
        return None

    for key in ("CUDA", "CPU"):
        library.impl(opname, launch, key)
    if hasattr(_torch.library, "register_fake"):
        _torch.library.register_fake(name, fake, lib=library)
    else:
        library.impl(opname, fake, "Meta")
    op = getattr(getattr(_torch.ops, namespace), opname)
    _libraries.append(library)  # must outlive the registration
    return op
