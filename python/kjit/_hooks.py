"""Compile and launch hooks written in Python (docs/Python.md).

The runtime tells kjit._kjit about compiles and launches through the plugin
ABI; _dispatch turns each event into the call Triton's knobs make. Nothing
is loaded into the runtime until the first hook is set, so a process
without Python hooks pays nothing for them.
"""

import json
from collections.abc import Mapping

from . import _kjit


class HookChain:
    """An ordered list of hooks: add(fn), remove(fn); calling the chain calls
    each (the exit chain in reverse order)."""

    def __init__(self, reverse=False):
        self._hooks = []
        self._reverse = reverse

    def add(self, hook):
        if not callable(hook):
            raise TypeError("a hook must be callable")
        _enable()
        self._hooks.append(hook)

    def remove(self, hook):
        self._hooks.remove(hook)

    def __bool__(self):
        return bool(self._hooks)

    def __len__(self):
        return len(self._hooks)

    def __call__(self, *args, **kwargs):
        for hook in (reversed(self._hooks) if self._reverse else list(self._hooks)):
            hook(*args, **kwargs)


class LaunchMetadata(Mapping):
    """What a launch hook learns about a launch: name, key, grid, num_warps,
    device, stream, correlation_id, launch_status (exit hooks), and the
    kernel's launch-metadata fields. The fields are parsed on first access."""

    def __init__(self, event):
        self._event = event
        self._data = None

    def _load(self):
        if self._data is None:
            data = {k: v for k, v in self._event.items() if k != "metadata_json"}
            extra = self._event.get("metadata_json")
            if extra:
                data.update(json.loads(extra))
            self._data = data
        return self._data

    def __getitem__(self, key):
        return self._load()[key]

    def __iter__(self):
        return iter(self._load())

    def __len__(self):
        return len(self._load())

    def __repr__(self):
        return f"LaunchMetadata({self._load()!r})"


class FunctionInfo:
    """The `fn` a compile hook receives: the kernel's name and target."""

    def __init__(self, name, target):
        self.name = name
        self.target = target

    def __repr__(self):
        return f"FunctionInfo(name={self.name!r}, target={self.target!r})"


class _Knobs:
    """Process-wide hooks, as triton.knobs.runtime:

    cache_hook(key=, repr=, fn=, compile=, is_manual_warmup=,
               already_compiled=) runs before each compile; a truthy result
               skips it (the launch then launches nothing).
    compiled_hook(...) the same arguments, after the compile; compile
               also holds the artifact's metadata.
    launch_enter_hook, launch_exit_hook: HookChains of fn(metadata).
    """

    def __init__(self):
        self._cache_hook = None
        self._compiled_hook = None
        self.launch_enter_hook = HookChain()
        self.launch_exit_hook = HookChain(reverse=True)

    @property
    def cache_hook(self):
        return self._cache_hook

    @cache_hook.setter
    def cache_hook(self, hook):
        if hook is not None:
            if not callable(hook):
                raise TypeError("cache_hook must be callable or None")
            _enable()
        self._cache_hook = hook

    @property
    def compiled_hook(self):
        return self._compiled_hook

    @compiled_hook.setter
    def compiled_hook(self, hook):
        if hook is not None:
            if not callable(hook):
                raise TypeError("compiled_hook must be callable or None")
            _enable()
        self._compiled_hook = hook


knobs = _Knobs()


def _compile_arguments(event):
    """The keyword arguments of a compile hook, in Triton's shape: compile
    holds the key, signature, constants, the attributes (divisibility_16,
    equal_to_1), each launch option, and specialization_data, the record
    that kernel.preload() accepts."""
    described = json.loads(event["compile_json"])
    record = described["record"]
    compile_info = dict(
        key=described["key"], signature=record["signature"],
        constants=record["constants"], attrs=record["attrs"], spec=record["spec"],
        target=event["target"], device=event["device"],
        is_warmup=event["is_warmup"], specialization_data=json.dumps(record))
    compile_info.update(record["options"])
    if "artifact_format" in event:
        compile_info["artifact_format"] = event["artifact_format"]
        compile_info["compile_ns"] = event["compile_ns"]
        metadata = event["metadata_json"]
        compile_info["metadata"] = json.loads(metadata) if metadata else {}
    return dict(key=event["key"], repr=event["repr"],
                fn=FunctionInfo(event["name"], event["target"]),
                compile=compile_info, is_manual_warmup=event["is_warmup"],
                already_compiled=False)


def _dispatch(kind, event):
    if kind == "cache":
        hook = knobs.cache_hook
        return bool(hook(**_compile_arguments(event))) if hook else False
    if kind == "compiled":
        hook = knobs.compiled_hook
        if hook:
            hook(**_compile_arguments(event))
        return None
    chain = knobs.launch_enter_hook if kind == "launch_enter" else knobs.launch_exit_hook
    if chain:
        chain(LaunchMetadata(event))
    return None


_enabled = False


def _enable():
    global _enabled
    if not _enabled:
        _kjit._set_hook_dispatcher(_dispatch)
        _kjit._enable_hooks()
        _enabled = True
