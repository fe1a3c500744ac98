"""kjit.autotune: Triton's @triton.autotune over kjit kernels.

The timing, the choice per key and the refusals are the runtime's
(kjit::rt::Autotuner, docs/Autotuning.md); this module spells the
configurations as Triton does and zeroes or restores the trials' tensors.
"""

_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class Config:
    """One configuration: constexpr values (`kwargs`) and the launch options
    that change speed only, as in Triton (`num_warps`, `num_stages`,
    `num_ctas`, `maxnreg`; None leaves an option to the launch's default)."""

    def __init__(self, kwargs, num_warps=None, num_stages=None, num_ctas=None,
                 maxnreg=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg

    def all_kwargs(self):
        """The constexprs and the options set, as one dict."""
        values = dict(self.kwargs)
        for option in _OPTIONS:
            if getattr(self, option) is not None:
                values[option] = getattr(self, option)
        return values

    def __repr__(self):
        return ", ".join(f"{k}: {v}" for k, v in self.all_kwargs().items())


class Autotuned:
    """A kernel whose launches take the fastest of `configs` for their key:
    autotuned[grid](*args, **kwargs). The first launch of a key times every
    configuration (its tensors' values are those of the call: an output
    accumulated into is zeroed before each trial when named in
    `reset_to_zero`, and an argument in `restore_value` is put back after
    the trials); later launches of the key take its choice."""

    def __init__(self, kernel, configs, key=(), reset_to_zero=(),
                 restore_value=()):
        if not configs:
            raise ValueError("kjit.autotune needs at least one Config")
        self.kernel = kernel
        self.configs = [c if isinstance(c, Config) else Config(c)
                        for c in configs]
        self.key = list(key)
        self.reset_to_zero = list(reset_to_zero)
        self.restore_value = list(restore_value)
        self._call = None  # (args, kwargs) of the launch that tunes
        self._saved = None
        self._state = kernel._autotuner(
            [c.all_kwargs() for c in self.configs], self.key,
            self._before if self.reset_to_zero or self.restore_value else None,
            self._after if self.restore_value else None)

    def _named(self, names):
        args, kwargs = self._call
        params = [p["name"] for p in self.kernel.params]
        for name in names:
            if name in kwargs:
                yield name, kwargs[name]
            elif params.index(name) < len(args):
                yield name, args[params.index(name)]

    def _before(self):
        if self._saved is None:
            self._saved = {name: _copy(value)
                           for name, value in self._named(self.restore_value)}
        else:
            for name, value in self._named(self.restore_value):
                _restore(value, self._saved[name])
        for _, value in self._named(self.reset_to_zero):
            _zero(value)

    def _after(self):
        for name, value in self._named(self.restore_value):
            _restore(value, self._saved[name])
        self._saved = None

    @property
    def best_config(self):
        """The Config the last launch used (None before the first)."""
        index = self.kernel._autotune_best(self._state)
        return None if index is None else self.configs[index]

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self._call = (args, kwargs)
            try:
                self.kernel._autotune_launch(self._state, grid, *args, **kwargs)
            finally:
                self._call = None
        return launch


def _copy(value):
    return value.clone() if hasattr(value, "clone") else value.copy()


def _restore(value, saved):
    if hasattr(value, "copy_"):
        value.copy_(saved)
    else:
        value[...] = saved


def _zero(value):
    if hasattr(value, "zero_"):
        value.zero_()
    else:
        value[...] = 0


def autotune(kernel=None, *, configs, key=(), reset_to_zero=(),
             restore_value=()):
    """Triton's @triton.autotune for a loaded kernel:
    `kjit.autotune(mod.matmul, configs=[kjit.Config({"BLOCK": 64},
    num_warps=4), ...], key=["M", "N"])`, or as a decorator
    `kjit.autotune(configs=..., key=...)(mod.matmul)`. The configurations
    set constexprs and the speed-only launch options; the key names scalar
    parameters (every tensor's dtype joins it); `reset_to_zero` and
    `restore_value` name tensors the trials would change."""
    def wrap(k):
        return Autotuned(k, configs, key, reset_to_zero, restore_value)
    return wrap if kernel is None else wrap(kernel)
