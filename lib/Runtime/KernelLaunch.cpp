//===- KernelLaunch.cpp - the hit path and the ABI's arguments ------------===//
//
// A launch: pre-run hooks, bind (no allocation), the globals check, the
// cache, the arguments in the plugin ABI's form and the backend's launch
// with the launch hooks around it. What a thread keeps between launches
// (its binding per kernel, the entry its last launch used, the ABI's
// argument array) is one thread-local object, reached once per launch.
//
//===----------------------------------------------------------------------===//

#include "BackendSpecializer.h"
#include "KernelImpl.h"
#include "kjit/Model/ArgEncoding.h"

#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

namespace kjit::rt {

using kjit::strCat;

/// A launch's arguments in the ABI's forms: the values alone (for a kernel
/// whose backend took its template at load), or kjit_args with the serial
/// of the entry whose template they hold.
struct LaunchArguments {
  absl::InlinedVector<uint64_t, 16> values;
  /// What `values` were encoded from: the entry (its serial), the binding
  /// and its generation. A launch loop that binds the same inputs again
  /// launches them as they are. (The thread's bindings live as long as
  /// the thread, and a nested launch has arguments of its own, so a
  /// binding's address is not another's while these are compared.)
  uint64_t valuesSerial = 0;
  const Binding *valuesBinding = nullptr;
  uint64_t valuesGeneration = 0;
  uint64_t serial = 0;
  absl::InlinedVector<kjit_arg, 8> args;
  absl::InlinedVector<const kjit_arg *, 8> pointers;

  void prepare(const Entry &entry) {
    if (serial == entry.serial)
      return; // the template is in place; the values are rewritten
    args.assign(entry.argTemplate.begin(), entry.argTemplate.end());
    pointers.resize(args.size());
    for (size_t j = 0; j < args.size(); ++j)
      pointers[j] = &args[j];
    serial = entry.serial;
  }
};

/// A thread's last launch of one kernel, kept so that the same launch again
/// is made without binding, looking up or encoding anything ("The last
/// launch again", docs/Dispatch.md): the backend's launch arguments as they
/// were passed, and what they were made from. Kept only for a launch of
/// values (the backend took the entry's template) with a fixed grid, no
/// launch hooks and no backend attributes, after a bind that found its last
/// inputs again: a loop's third launch is the first replayed. While the
/// inputs are field for field the same, the config the same and the
/// device's dispatch version the one the entry was found under, the binder,
/// the cache and the encoding would give these arguments again; the globals
/// check and the hooks' presence are checked as on every launch.
struct LastLaunch {
  static constexpr size_t kMaxInputs = 16;
  static constexpr size_t kMaxKeywords = 4;
  static constexpr size_t kMaxValues = 16;
  // In the order a replay reads them.
  /// The dispatch version the entry was found under; 0: nothing to replay.
  uint64_t version = 0;
  const Backend *backend = nullptr;
  int32_t device = 0;
  uint32_t numPositional = 0;
  uint32_t numKeywords = 0;
  kjit_backend_launch_args launch;
  /// launch.values points here.
  uint64_t values[kMaxValues];
  /// The positional values, then the keywords' values.
  Argument inputs[kMaxInputs];
  std::string names[kMaxKeywords];

  ABSL_ATTRIBUTE_ALWAYS_INLINE bool
  matches(const Kernel::Impl &impl, const LaunchConfig &config,
          absl::Span<const Argument> positional,
          absl::Span<const KeywordArgument> keywords) const {
    // What guards the reads that follow, first; then everything else is
    // compared at once, without a branch per field: fewer lines of code on
    // a path whose code the driver's launch evicts (docs/Dispatch.md).
    if (!version || positional.size() != numPositional ||
        keywords.size() != numKeywords || config.gridFn)
      return false;
    uint64_t differ =
        uint32_t(config.device ^ device) | (config.stream ^ launch.stream) |
        (config.grid[0] ^ launch.grid[0]) | (config.grid[1] ^ launch.grid[1]) |
        (config.grid[2] ^ launch.grid[2]);
    // The globals version before the dispatch version, as launchWith reads
    // them: a globals check on another thread (a recompile policy) clears
    // the dispatch cache before it marks the globals version checked, so a
    // launch that finds it checked finds the cache cleared too. The other
    // order could replay an entry baked with the value before the
    // assignment (LastLaunchFuzzTest's race test). The version is the kept
    // device's, which the cache covers (a launch's device differs anyway).
    differ |= uint64_t(!impl.globalsUnchanged());
    differ |= impl.dispatch.version(device) ^ version;
    differ |= uint64_t(impl.host->hasLaunchHooks());
    // Raw pointers: Debian's Abseil checks every Span index (hardened).
    const Argument *given = positional.data();
    // (A mismatch ends the loop: launches whose arguments change bind
    // anew, and should not pay for reading every kept input first.)
    for (size_t i = 0; i < numPositional && !differ; ++i)
      differ |= given[i].difference(inputs[i]);
    const KeywordArgument *named = keywords.data();
    for (size_t i = 0; i < numKeywords; ++i) {
      if (named[i].name.size() != names[i].size())
        return false;
      differ |= named[i].value.difference(inputs[numPositional + i]) |
                nameDifference(named[i].name, names[i]);
    }
    return differ == 0;
  }

  /// Zero when `given` (of `kept`'s size) is `kept`, compared here eight
  /// bytes at a time: a launch's keyword names are short ("num_warps"),
  /// and libc's memcmp would be code lines of its own on the path.
  ABSL_ATTRIBUTE_ALWAYS_INLINE static uint64_t
  nameDifference(std::string_view given, const std::string &kept) {
    const size_t size = given.size();
    const char *a = given.data(), *b = kept.data();
    uint64_t differ = 0;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t x, y;
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      differ |= x ^ y;
    }
    for (; i < size; ++i)
      differ |= uint8_t(a[i] ^ b[i]);
    return differ;
  }

  /// The launch made again; after a backend's error nothing is replayed
  /// until a launch is kept again.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::StatusOr<LaunchResult> replay() {
    // A copy: the ABI does not promise that a backend leaves it unchanged.
    kjit_backend_launch_args copy = launch;
    if (absl::Status status = backend->ref.launchPrepared(copy);
        ABSL_PREDICT_FALSE(!status.ok())) {
      version = 0;
      return status;
    }
    LaunchResult result;
    result.launched = true;
    return result;
  }
};

/// What a thread keeps for one kernel between its launches: the binding
/// it binds into (sized once), and the entry its last launch used, with
/// the device and the dispatch version it was found under. `entry` is null
/// unless it is the entry of the binding's key (launchWith forgets it when
/// a bind changes the key); while the device's version is unchanged, it is
/// what a lookup would find (DispatchCache.h: only a drop changes it).
struct Kernel::Impl::ThreadState {
  // In the line of the last launch's first fields, which every launch
  // reads.
  int32_t device = -1;
  uint64_t version = 0;
  Entry *entry = nullptr;
  LastLaunch last;
  Binding binding;

  bool remembers(int32_t launchDevice, uint64_t current) const {
    return entry && device == launchDevice && version == current;
  }
};

namespace {
/// Everything a thread keeps between launches.
struct ThreadLaunchState {
  // What every launch reads comes first, with the first values of the
  // arguments after it.
  /// How deep this thread is in launches: a launch from a hook, the grid
  /// callback or the launch-metadata callback is a nested one, which uses
  /// its own binding and arguments so that it cannot overwrite those of the
  /// launch around it.
  int depth = 0;
  /// The kernel asked last, and its state in `kernels`.
  uint64_t lastKernel = 0;
  Kernel::Impl::ThreadState *last = nullptr;
  /// The outermost launch's arguments: they keep the template of the entry
  /// last launched, so a loop that launches one kernel rewrites only the
  /// values.
  LaunchArguments arguments;
  /// Per kernel id (unique in the process, so a destroyed kernel's state
  /// is never taken for a new one's; it stays until the thread exits, a
  /// few hundred bytes), pointer-stable.
  absl::node_hash_map<uint64_t, Kernel::Impl::ThreadState> kernels;

  Kernel::Impl::ThreadState &forKernel(const Kernel::Impl &impl) {
    if (lastKernel != impl.id) {
      auto it = kernels.find(impl.id);
      if (it == kernels.end())
        it = kernels
                 .try_emplace(impl.id,
                              Kernel::Impl::ThreadState{
                                  -1, 0, nullptr, {}, impl.plan->makeBinding()})
                 .first;
      lastKernel = impl.id;
      last = &it->second;
    }
    return *last;
  }
};

/// This thread's launch state. The pointer is what every launch reads, so
/// it lives in the static TLS block (initial-exec: one instruction, no
/// call to __tls_get_addr, at the price of 8 bytes there, which a library
/// opened later can still get); the state itself is owned by `owned`,
/// reached only once per thread.
[[gnu::tls_model(
    "initial-exec")]] thread_local ThreadLaunchState *threadLaunchState =
    nullptr;

ABSL_ATTRIBUTE_NOINLINE ThreadLaunchState &makeThreadLaunchState() {
  struct Owner {
    std::unique_ptr<ThreadLaunchState> state;
    ~Owner() { threadLaunchState = nullptr; }
  };
  thread_local Owner owned;
  owned.state = std::make_unique<ThreadLaunchState>();
  threadLaunchState = owned.state.get();
  return *threadLaunchState;
}
/// The backend's launch arguments of `entry` bound by `binding`, without
/// the values (args and values null).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void
describeLaunch(const Entry &entry, const Binding &binding, uint64_t stream,
               const Grid &grid, kjit_backend_launch_args &launch) {
  // Field by field rather than value-initialized: GCC 12 zeroes a local of
  // this size with `rep stos`, which is slow to start (the static_assert
  // is there so that a field the ABI adds is set here too).
  static_assert(sizeof(kjit_backend_launch_args) == 104,
                "kjit_backend_launch_args changed: set its new fields here");
  launch.struct_size = sizeof(launch);
  launch.ext = nullptr;
  launch.kernel = entry.backendKernel;
  for (int axis = 0; axis < 3; ++axis)
    launch.grid[axis] = grid[axis];
  const LaunchOptions &options = binding.options();
  launch.num_warps = uint32_t(options.numWarps());
  launch.shared_memory_bytes = entry.sharedMemoryBytes;
  launch.stream = stream;
  launch.num_args = entry.launchParams.size();
  launch.args = nullptr;
  launch.flags = (options.flag(LaunchOption::LaunchCooperativeGrid)
                      ? KJIT_LAUNCH_COOPERATIVE
                      : 0) |
                 (options.flag(LaunchOption::LaunchPdl) ? KJIT_LAUNCH_PDL : 0);
  launch.cluster[0] = launch.cluster[1] = launch.cluster[2] = 0;
  launch.correlation_id = 0;
  launch.values = nullptr;
}
} // namespace

absl::Status Kernel::Impl::launchEntry(const Entry &entry,
                                       const Binding &binding,
                                       const LaunchConfig &config,
                                       LaunchArguments &arguments) {
  const Backend &backend = *entry.backend;
  absl::Span<const Argument> bound = binding.arguments();
  Grid grid = config.gridFn ? config.gridFn(bound) : config.grid;
  // A grid with a zero extent (cdiv(0, BLOCK) for an empty input) runs no
  // program and is no error, as in Triton's launcher: the entry was bound
  // and compiled as usual, and the hooks still see the launch; only the
  // backend is not called.
  const bool empty = grid[0] == 0 || grid[1] == 0 || grid[2] == 0;
  // Program ids and counts are i32 (kjit.program_id, as in Triton): a
  // larger extent would hand programs negative ids.
  constexpr uint32_t kMaxExtent = INT32_MAX;
  if (grid[0] > kMaxExtent || grid[1] > kMaxExtent || grid[2] > kMaxExtent)
      [[unlikely]]
    return gridTooLarge(grid);

  kjit_backend_launch_args launch;
  describeLaunch(entry, binding, config.stream, grid, launch);

  // Without launch hooks nobody reads the launch's description, so the
  // launch-metadata callback is not run either (it is lazy, as in Triton,
  // which calls launch_metadata only for a launch-enter hook): a cache hit
  // allocates nothing. A backend that took the entry's template at load
  // gets the values alone.
  const bool hooked = host->hasLaunchHooks();
  if (entry.takesValues && !hooked) {
    if (arguments.valuesSerial != entry.serial ||
        arguments.valuesBinding != &binding ||
        arguments.valuesGeneration != binding.generation()) [[unlikely]]
      encodeValues(entry, binding, launch.num_args, arguments);
    launch.values = arguments.values.data();
    return empty ? absl::OkStatus() : backend.ref.launchPrepared(launch);
  }
  return launchArguments(entry, binding, config, grid, empty, hooked, launch,
                         arguments);
}

// Out of line and apart from launchEntry, so that the path of values stays
// a few cache lines of code: between two GPU launches the driver's own code
// evicts much of the instruction cache.
void Kernel::Impl::encodeValues(const Entry &entry, const Binding &binding,
                                size_t count, LaunchArguments &arguments) {
  arguments.values.resize(count);
  uint64_t *values = arguments.values.data();
  // Raw pointers: Debian's Abseil checks every Span index (hardened).
  const Argument *boundValues = binding.arguments().data();
  const Entry::LaunchParam *params = entry.launchParams.data();
  for (size_t j = 0; j < count; ++j) {
    // The binder accepted the value for the entry's signature type (the
    // binding's key selected the entry): only the value is encoded.
    values[j] = encodeBoundBits(params[j].type, boundValues[params[j].index]);
  }
  arguments.valuesSerial = entry.serial;
  arguments.valuesBinding = &binding;
  arguments.valuesGeneration = binding.generation();
}

void Kernel::Impl::keepLastLaunch(
    ThreadState &state, const Entry &entry, const LaunchConfig &config,
    const LaunchArguments &arguments, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords) const {
  LastLaunch &last = state.last;
  last.version = 0;
  const Grid &grid = config.grid;
  const size_t count = entry.launchParams.size();
  // What a replay cannot make again: a grid computed per launch, launch
  // hooks, a kjit_arg launch, no launch at all (an empty grid), an entry
  // not (or no longer) remembered in the published map, or more than the
  // record holds.
  if (config.gridFn || host->hasLaunchHooks() || !entry.takesValues ||
      grid[0] == 0 || grid[1] == 0 || grid[2] == 0 ||
      !state.remembers(config.device, dispatch.version(config.device)) ||
      state.entry != &entry || arguments.valuesSerial != entry.serial ||
      arguments.valuesBinding != &state.binding ||
      arguments.valuesGeneration != state.binding.generation() ||
      count > LastLaunch::kMaxValues ||
      positional.size() + keywords.size() > LastLaunch::kMaxInputs ||
      keywords.size() > LastLaunch::kMaxKeywords)
    return;
  describeLaunch(entry, state.binding, config.stream, grid, last.launch);
  std::copy_n(arguments.values.data(), count, last.values);
  last.launch.values = last.values;
  std::copy(positional.begin(), positional.end(), last.inputs);
  for (size_t i = 0; i < keywords.size(); ++i) {
    last.inputs[positional.size() + i] = keywords[i].value;
    last.names[i].assign(keywords[i].name);
  }
  last.backend = entry.backend;
  last.device = config.device;
  last.numPositional = uint32_t(positional.size());
  last.numKeywords = uint32_t(keywords.size());
  last.version = state.version;
}

absl::Status Kernel::Impl::gridTooLarge(const Grid &grid) const {
  return absl::InvalidArgumentError(kjit::strCat(
      "cannot launch '", manifest.name, "' on grid (", grid[0], ", ", grid[1],
      ", ", grid[2],
      "): program ids are i32, so each extent is at most 2147483647"));
}

absl::Status Kernel::Impl::launchArguments(
    const Entry &entry, const Binding &binding, const LaunchConfig &config,
    const Grid &grid, bool empty, bool hooked, kjit_backend_launch_args &launch,
    LaunchArguments &arguments) {
  const Backend &backend = *entry.backend;
  absl::Span<const Argument> bound = binding.arguments();
  // The launch arguments as kjit_args: the entry's template with this
  // launch's values.
  arguments.prepare(entry);
  absl::Span<kjit_arg> cArgs = absl::MakeSpan(arguments.args);
  for (size_t j = 0; j < cArgs.size(); ++j) {
    const Entry::LaunchParam &param = entry.launchParams[j];
    encodeBoundValue(param.type, bound[param.index], cArgs[j]);
  }
  launch.args = arguments.pointers.data();
  if (!hooked)
    return empty ? absl::OkStatus() : backend.ref.launchPrepared(launch);

  // With hooks, the launch is also described to them.
  std::vector<plugin::ArgInfo> args;
  for (const kjit_arg &c : cArgs) {
    plugin::ArgInfo arg;
    arg.name = std::string_view(c.name, c.name_len);
    arg.type = std::string_view(c.type, c.type_len);
    arg.kind = c.kind;
    arg.intValue = c.int_value;
    arg.uintValue = c.uint_value;
    arg.floatValue = c.float_value;
    arg.dtype = c.dtype;
    arg.flags = c.flags;
    arg.bits = c.bits;
    arg.bitsSize = c.bits_size;
    args.push_back(arg);
  }
  // The metadata is for launch_enter hooks (exit hooks see what enter
  // saw): with only exit or completion hooks loaded the callback, which may
  // be costly (it often launches or reads tensors), does not run.
  std::string metadata;
  if (host->hasLaunchEnterHooks())
    if (std::shared_ptr<const LaunchMetadataSlot::Callback> callback =
            launchMetadata.get())
      metadata = strCat("{", (*callback)(bound), "}");
  plugin::LaunchInfo info;
  info.kernelName = manifest.name;
  info.key = entry.key;
  info.grid = grid;
  info.numWarps = launch.num_warps;
  info.device = config.device;
  info.stream = config.stream;
  info.metadataJson = metadata;
  info.args = args;
  // A trial's launch carries the id its device time is filed under.
  plugin::LaunchRecord record =
      host->runLaunchEnter(info, launch.correlation_id);
  launch.correlation_id = record.correlationId();
  // A plugin wants device times: ask a backend that can measure them.
  if (host->hasLaunchCompleteHooks() &&
      (backend.launchFlags & KJIT_LAUNCH_TIMED))
    launch.flags |= KJIT_LAUNCH_TIMED;
  absl::Status status =
      empty ? absl::OkStatus() : backend.ref.launchPrepared(launch);
  host->runLaunchExit(record, info, int32_t(status.raw_code()));
  return status;
}

// Every launch and every warmup runs the pre-run hooks first, with the
// arguments as given (before binding), as the reference's run() calls
// them on every path; an error from one aborts the launch before anything
// is bound, compiled or launched.
absl::Status Kernel::Impl::describeToPreRunHooks(
    absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords) {
  plugin::PluginHost &host = *this->host;
  std::vector<plugin::ArgInfo> seen;
  std::vector<std::string> types;
  types.reserve(positional.size() + keywords.size());
  for (const Argument &value : positional)
    types.push_back(describeArgument(value));
  for (const KeywordArgument &keyword : keywords)
    types.push_back(describeArgument(keyword.value));
  for (size_t i = 0; i < types.size(); ++i) {
    bool isKeyword = i >= positional.size();
    const Argument &value =
        isKeyword ? keywords[i - positional.size()].value : positional[i];
    plugin::ArgInfo arg;
    arg.name =
        isKeyword ? keywords[i - positional.size()].name : std::string_view();
    arg.type = types[i];
    switch (value.kind()) {
    case ArgKind::Bool:
      arg.kind = KJIT_ARG_BOOL;
      arg.intValue = value.asBool();
      break;
    case ArgKind::Int:
      // Beyond 64 bits the binder will refuse it; the hook sees the type.
      if (value.asInt() >= INT64_MIN && value.asInt() <= INT64_MAX) {
        arg.kind = KJIT_ARG_INT;
        arg.intValue = int64_t(value.asInt());
      }
      break;
    case ArgKind::Float:
      arg.kind = KJIT_ARG_FLOAT;
      arg.floatValue = value.asFloat();
      break;
    case ArgKind::Tensor:
      arg.kind = KJIT_ARG_POINTER;
      arg.uintValue = value.address();
      break;
    default:
      break; // None, a dtype, a callable: described by the type text
    }
    seen.push_back(arg);
  }
  return host.runPreRunHooks(manifest.name, seen);
}

absl::StatusOr<LaunchResult>
Kernel::Impl::launchWith(ThreadState &state, LaunchArguments &arguments,
                         const LaunchConfig &config,
                         absl::Span<const Argument> positional,
                         absl::Span<const KeywordArgument> keywords) {
  Binding &binding = state.binding;
  const uint64_t generation = binding.generation();
  // A backend's own specialization attributes (plugin ABI 1.3) join the
  // key: only a backend that describes some is asked.
  std::optional<BackendSpecializer> specializer =
      BackendSpecializer::forBackend(getBackend(), config.device);
  const BackendAttributes *attributes = specializer ? &*specializer : nullptr;
  if (absl::Status bound =
          plan->bind(positional, keywords, binding, attributes);
      ABSL_PREDICT_FALSE(!bound.ok()))
    return bound;
  // The remembered entry is the last looked-up key's: a new key forgets it
  // now, as a launch that fails before the lookup (a changed global, a
  // device out of range) would otherwise leave it for the next bind of the
  // same new key, which the binder reports unchanged.
  if (!binding.keyUnchanged())
    state.entry = nullptr;
  if (absl::Status globals = checkGlobals(); ABSL_PREDICT_FALSE(!globals.ok()))
    return globals;

  if (absl::Status valid = checkDevice(config.device);
      ABSL_PREDICT_FALSE(!valid.ok()))
    return valid;
  LaunchResult result;
  // The same key as this thread's last launch of the kernel, on the same
  // device, with nothing dropped since: its entry, without hashing the key
  // or looking it up.
  const uint64_t version = dispatch.version(config.device);
  Entry *entry =
      state.remembers(config.device, version) ? state.entry : nullptr;
  if (ABSL_PREDICT_FALSE(!entry)) {
    absl::Status status;
    entry = findEntry(state, config.device, version, attributes, config.mayLoad,
                      result, status);
    if (!entry)
      return status.ok() ? absl::StatusOr<LaunchResult>(result)
                         : absl::StatusOr<LaunchResult>(status);
  }
  if (absl::Status status = launchEntry(*entry, binding, config, arguments);
      ABSL_PREDICT_FALSE(!status.ok()))
    return status;
  // A bind that found its last inputs again (a loop's second launch, or a
  // launch after a replay was refused): the next may be a replay. A backend
  // with attributes always binds (BindPlan::bind), so it never gets here.
  if (ABSL_PREDICT_FALSE(generation == binding.generation() && !attributes))
    keepLastLaunch(state, *entry, config, arguments, positional, keywords);
  result.launched = true;
  return result;
}

Entry *Kernel::Impl::findEntry(ThreadState &state, int32_t device,
                               uint64_t version,
                               const BackendAttributes *attributes,
                               bool mayLoad, LaunchResult &result,
                               absl::Status &status) {
  Binding &binding = state.binding;
  if (!mayLoad) {
    Entry *loaded = dispatch.find(device, binding.key());
    if (!loaded ||
        loaded->state.load(std::memory_order_acquire) != Entry::State::Ready) {
      status = absl::UnavailableError(kjit::strCat(
          "kernel '", manifest.name,
          "' is not loaded for this specialization, and this launch may not "
          "compile or load it (LaunchConfig::mayLoad is false): launch or "
          "warm it up once with these argument types first"));
      return nullptr;
    }
  }
  Entry *entry = ensureEntry(
      device, binding.key(),
      [&] { return plan->makeRecord(binding, attributes); },
      /*isWarmup=*/false, status, &result.compiled, &result.diskHit,
      &result.remoteHit);
  if (!status.ok())
    return nullptr;
  if (entry->state.load(std::memory_order_acquire) == Entry::State::Skipped)
    return nullptr; // the cache hook said skip: nothing to launch
  // Remembered under the version read before the lookup: a drop since then
  // (this entry's or a clear) makes the next launch look up again.
  state.device = device;
  state.version = version;
  state.entry = entry;
  return entry;
}

namespace {
/// One more launch in progress on this thread, for its scope.
struct Depth {
  int &depth;
  explicit Depth(int &depth) : depth(depth) { ++depth; }
  ~Depth() { --depth; }
};

/// Kernel::launch's less common cases, out of its code: pre-run hooks to
/// run, a thread's first launch, a nested launch, and a kernel other than
/// the thread's last.
ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<LaunchResult>
launchAnew(Kernel::Impl &impl, const LaunchConfig &config,
           absl::Span<const Argument> positional,
           absl::Span<const KeywordArgument> keywords) {
  if (absl::Status hooks = impl.runPreRunHooks(positional, keywords);
      ABSL_PREDICT_FALSE(!hooks.ok()))
    return hooks;
  // Read after the hooks: a hook's own launch may have made this thread's
  // state.
  ThreadLaunchState &thread = ABSL_PREDICT_TRUE(threadLaunchState != nullptr)
                                  ? *threadLaunchState
                                  : makeThreadLaunchState();
  if (ABSL_PREDICT_FALSE(thread.depth != 0)) {
    // A launch from a callback or hook binds into its own storage.
    Depth depth(thread.depth);
    return impl.launchNested(config, positional, keywords);
  }
  Kernel::Impl::ThreadState &state = thread.forKernel(impl);
  if (state.last.matches(impl, config, positional, keywords))
    return state.last.replay();
  Depth depth(thread.depth);
  return impl.launchWith(state, thread.arguments, config, positional, keywords);
}
} // namespace

// On a line of its own (64 bytes): its code starts a line rather than
// sharing one, which is one line of code fewer to fetch on every launch.
[[gnu::aligned(64)]] absl::StatusOr<LaunchResult>
Kernel::launch(const LaunchConfig &config,
               absl::Span<const Argument> positional,
               absl::Span<const KeywordArgument> keywords) {
  Impl &impl = *impl_;
  ThreadLaunchState *thread = threadLaunchState;
  // A loop's launch, in few lines of code: the outermost launch of the
  // kernel this thread launched last, without pre-run hooks to run.
  if (ABSL_PREDICT_TRUE(thread != nullptr && thread->lastKernel == impl.id &&
                        thread->depth == 0 && !impl.host->hasPreRunHooks())) {
    Impl::ThreadState &state = *thread->last;
    // The same as that launch: made again as it was (it calls no callback
    // or hook, so it needs no depth).
    if (ABSL_PREDICT_TRUE(
            state.last.matches(impl, config, positional, keywords)))
      return state.last.replay();
    // The outermost launch of a thread binds into reusable per-thread
    // storage.
    Depth depth(thread->depth);
    return impl.launchWith(state, thread->arguments, config, positional,
                           keywords);
  }
  return launchAnew(impl, config, positional, keywords);
}

absl::StatusOr<LaunchResult>
Kernel::Impl::launchNested(const LaunchConfig &config,
                           absl::Span<const Argument> positional,
                           absl::Span<const KeywordArgument> keywords) {
  struct NestedLaunch {
    ThreadState state;
    LaunchArguments arguments;
  };
  auto nested = std::make_unique<NestedLaunch>();
  nested->state.binding = plan->makeBinding();
  return launchWith(nested->state, nested->arguments, config, positional,
                    keywords);
}

absl::Status Kernel::Impl::bindTrial(const LaunchConfig &config,
                                     absl::Span<const Argument> positional,
                                     absl::Span<const KeywordArgument> keywords,
                                     Binding &binding,
                                     const BackendAttributes *attributes) {
  if (absl::Status bound =
          plan->bind(positional, keywords, binding, attributes);
      !bound.ok())
    return bound;
  if (absl::Status globals = checkGlobals(); !globals.ok())
    return globals;
  return checkDevice(config.device);
}

absl::Status
Kernel::Impl::prepareTrial(const LaunchConfig &config,
                           absl::Span<const Argument> positional,
                           absl::Span<const KeywordArgument> keywords) {
  Binding binding = plan->makeBinding();
  std::optional<BackendSpecializer> specializer =
      BackendSpecializer::forBackend(getBackend(), config.device);
  const BackendAttributes *attributes = specializer ? &*specializer : nullptr;
  if (absl::Status bound =
          bindTrial(config, positional, keywords, binding, attributes);
      !bound.ok())
    return bound;
  absl::Status status;
  ensureEntry(
      config.device, binding.key(),
      [&] { return plan->makeRecord(binding, attributes); },
      /*isWarmup=*/false, status, /*compiled=*/nullptr);
  return status;
}

absl::StatusOr<LaunchResult>
Kernel::Impl::launchTrial(const LaunchConfig &config,
                          absl::Span<const Argument> positional,
                          absl::Span<const KeywordArgument> keywords,
                          uint64_t correlationId, bool *timed) {
  *timed = false;
  if (absl::Status hooks = runPreRunHooks(positional, keywords); !hooks.ok())
    return hooks;
  ThreadLaunchState &thread = threadLaunchState != nullptr
                                  ? *threadLaunchState
                                  : makeThreadLaunchState();
  // A launch from the trial's hooks or callbacks is a nested one.
  Depth depth(thread.depth);
  struct Trial {
    ThreadState state;
    LaunchArguments arguments;
  };
  auto trial = std::make_unique<Trial>();
  trial->state.binding = plan->makeBinding();
  Binding &binding = trial->state.binding;
  std::optional<BackendSpecializer> specializer =
      BackendSpecializer::forBackend(getBackend(), config.device);
  const BackendAttributes *attributes = specializer ? &*specializer : nullptr;
  if (absl::Status bound =
          bindTrial(config, positional, keywords, binding, attributes);
      !bound.ok())
    return bound;
  LaunchResult result;
  absl::Status status;
  Entry *entry =
      findEntry(trial->state, config.device, dispatch.version(config.device),
                attributes, config.mayLoad, result, status);
  if (!entry)
    return status.ok() ? absl::StatusOr<LaunchResult>(result)
                       : absl::StatusOr<LaunchResult>(status);
  const Backend &backend = *entry->backend;
  Grid grid = config.gridFn ? config.gridFn(binding.arguments()) : config.grid;
  const bool empty = grid[0] == 0 || grid[1] == 0 || grid[2] == 0;
  constexpr uint32_t kMaxExtent = INT32_MAX;
  if (grid[0] > kMaxExtent || grid[1] > kMaxExtent || grid[2] > kMaxExtent)
    return gridTooLarge(grid);
  kjit_backend_launch_args launch;
  describeLaunch(*entry, binding, config.stream, grid, launch);
  if (correlationId != 0 && !empty &&
      (backend.launchFlags & KJIT_LAUNCH_TIMED)) {
    launch.flags |= KJIT_LAUNCH_TIMED;
    launch.correlation_id = correlationId;
    *timed = true;
  }
  if (absl::Status launched =
          launchArguments(*entry, binding, config, grid, empty,
                          host->hasLaunchHooks(), launch, trial->arguments);
      !launched.ok()) {
    *timed = false;
    return launched;
  }
  result.launched = true;
  return result;
}

} // namespace kjit::rt
