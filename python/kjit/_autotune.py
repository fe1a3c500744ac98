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
    the trials); later launches of the key take its choice.
    `prune_configs_by` is Triton's: `early_config_prune(configs, named_args)`
    returns the configurations to time, then `perf_model(**named_args,
    **config.all_kwargs())` estimates each and the `top_k` lowest (a float
    up to 1.0: that fraction) are timed."""

    def __init__(self, kernel, configs, key=(), reset_to_zero=(),
                 restore_value=(), prune_configs_by=None):
        if not configs:
            raise ValueError("kjit.autotune needs at least one Config")
        self.kernel = kernel
        self.configs = [c if isinstance(c, Config) else Config(c)
                        for c in configs]
        self.key = list(key)
        self.reset_to_zero = list(reset_to_zero)
        self.restore_value = list(restore_value)
        prune = dict(prune_configs_by or {})
        unknown = set(prune) - {"early_config_prune", "perf_model", "top_k"}
        if unknown:
            raise ValueError(
                "prune_configs_by takes early_config_prune, perf_model and "
                f"top_k, not {', '.join(sorted(unknown))}")
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.top_k = prune.get("top_k")
        self._call = None  # (args, kwargs) of the launch that tunes
        self._saved = None
        self._state = kernel._autotuner(
            [c.all_kwargs() for c in self.configs], self.key,
            self._before if self.reset_to_zero or self.restore_value else None,
            self._after if self.restore_value else None,
            self._prune if self.early_config_prune or
            (self.perf_model and self.top_k) else None)

    def _named(self, names):
        args, kwargs = self._call
        params = [p["name"] for p in self.kernel.params]
        for name in names:
            if name in kwargs:
                yield name, kwargs[name]
            elif params.index(name) < len(args):
                yield name, args[params.index(name)]

    def _prune(self):
        """The indices of the configurations to time for the tuning call."""
        args, kwargs = self._call
        params = [p["name"] for p in self.kernel.params]
        named = dict(zip(params, args))
        named.update(kwargs)
        configs = list(self.configs)
        if self.early_config_prune:
            configs = list(self.early_config_prune(configs, named))
        if self.perf_model and self.top_k:
            top_k = self.top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(self.configs) * top_k))
            if len(configs) > top_k:
                estimates = [(self.perf_model(**named, **c.all_kwargs()), i)
                             for i, c in enumerate(configs)]
                configs = [configs[i] for _, i in sorted(estimates)[:top_k]]
        kept = []
        for config in configs:
            found = [i for i, c in enumerate(self.configs) if c is config]
            if not found:
                raise ValueError(
                    f"the prune function returned {config!r}, which is not "
                    "one of the configurations")
            kept.append(found[0])
        return kept

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
            # A snapshot belongs to one call's tensors: the one taken before
            # the launch that follows a tuning must not be restored into the
            # next tuning's.
            self._call, self._saved = (args, kwargs), None
            try:
                self.kernel._autotune_launch(self._state, grid, *args, **kwargs)
            finally:
                self._call, self._saved = None, None
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
             restore_value=(), prune_configs_by=None):
    """Triton's @triton.autotune for a loaded kernel:
    `kjit.autotune(mod.matmul, configs=[kjit.Config({"BLOCK": 64},
    num_warps=4), ...], key=["M", "N"])`, or as a decorator
    `kjit.autotune(configs=..., key=...)(mod.matmul)`. The configurations
    set constexprs and the speed-only launch options; the key names scalar
    parameters (every tensor's dtype joins it); `reset_to_zero` and
    `restore_value` name tensors the trials would change;
    `prune_configs_by` is Triton's (Autotuned)."""
    def wrap(k):
        return Autotuned(k, configs, key, reset_to_zero, restore_value,
                         prune_configs_by)
    return wrap if kernel is None else wrap(kernel)
