//===- BackendRef.cpp - calls into a plugin's backend table ---------------===//
//
// Runtime core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"
#include "kjit/Model/Json.h"
#include "kjit/Model/Specialization.h"

#include <vector>

using namespace kjit::plugin;
using namespace kjit::plugin::detail;
using kjit::strCat;

namespace {

/// Runs one backend entry; returns the plugin's status as an absl::Status.
template <typename Fn>
absl::Status callBackend(LoadedPlugin &p, const char *entry, Fn &&fn) {
  kjit_status *status = nullptr;
  if (!p.call([&] { status = fn(); }))
    return gone(p);
  return ABSL_PREDICT_TRUE(!status) ? absl::OkStatus()
                                    : toAbsl(p, entry, status);
}

/// describe's 1.3 spec_attributes into `out`; what is wrong with them, or
/// "". A name is what records and keys spell, so it is held to the
/// spelling of a JSON key and a key part: [a-z0-9_]+.
std::string
readSpecAttributes(const LoadedPlugin &p,
                   const kjit_backend_describe_args &args,
                   std::vector<BackendRef::Description::SpecAttribute> &out) {
  size_t count = args.num_spec_attributes;
  if (count == 0)
    return std::string();
  if (count > KJIT_MAX_SPEC_ATTRIBUTES)
    return strCat("spec_attributes has ", count,
                  " entries, more than the limit of ",
                  KJIT_MAX_SPEC_ATTRIBUTES);
  if (!args.spec_attributes)
    return strCat("spec_attributes is NULL with ", count, " entries");
  if (!p.backend.specialize)
    return "it describes spec_attributes but has no specialize entry";
  constexpr uint32_t kKnownKinds =
      KJIT_SPEC_ON_POINTERS | KJIT_SPEC_ON_INTEGERS;
  for (size_t i = 0; i < count; ++i) {
    const kjit_spec_attribute *a = args.spec_attributes[i];
    std::string what = strCat("spec attribute #", i);
    if (!a)
      return strCat(what, " is NULL");
    if (std::string bad = checkName(a->name, a->name_len, what + "'s name");
        !bad.empty())
      return bad;
    std::string name(a->name, a->name_len);
    if (!kjit::rt::isBackendAttributeName(name))
      return strCat(what, "'s name '", kjit::escapeControl(name),
                    "' is not [a-z0-9_]+ of at most 64 bytes");
    if (name == "divisibility_16" || name == "equal_to_1")
      return strCat(what, " is named '", name,
                    "', which the runtime's own attributes use");
    for (const auto &earlier : out)
      if (earlier.name == name)
        return strCat("spec attribute '", name, "' is described twice");
    if (a->kinds == 0 || (a->kinds & ~kKnownKinds))
      return strCat("spec attribute '", name, "' has kinds 0x",
                    absl::Hex(a->kinds),
                    "; KJIT_SPEC_ON_POINTERS (1) and KJIT_SPEC_ON_INTEGERS "
                    "(2) are the kinds there are");
    out.push_back({std::move(name), a->kinds});
  }
  return std::string();
}

} // namespace

std::string_view BackendRef::name() const {
  return view(plugin->backend.name, plugin->backend.name_len);
}

std::string BackendRef::pluginDescription() const { return plugin->describe(); }

uint32_t BackendRef::abiMinor() const { return plugin->minor; }

absl::StatusOr<int32_t> BackendRef::deviceCount() const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.device_count)
    return 1; // the ABI's meaning of a NULL slot: one device, 0
  auto args = zeroed<kjit_backend_device_count_args>();
  if (absl::Status s =
          callBackend(p, "device_count",
                      [&] { return p.backend.device_count(p.self, &args); });
      !s.ok())
    return s;
  if (args.count < 0)
    return absl::InternalError(strCat(p.describe(), ": device_count answered ",
                                      args.count, " devices"));
  return args.count;
}

absl::StatusOr<BackendRef::Description>
BackendRef::describe(int32_t device) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.describe)
    return unsupported(p, "backend", "describe");
  auto args = zeroed<kjit_backend_describe_args>();
  args.device = device;
  if (absl::Status s = callBackend(
          p, "describe", [&] { return p.backend.describe(p.self, &args); });
      !s.ok())
    return s;
  // Every length and count is checked before anything is read through it:
  // a backend that lies about one is refused, never trusted.
  std::string bad;
  auto name = [&](const char *data, size_t size, std::string_view what) {
    if (bad.empty())
      bad = checkName(data, size, what);
    return bad.empty() ? std::string(data ? data : "", size) : std::string();
  };
  auto list = [&](const void *items, size_t count, std::string_view what) {
    if (bad.empty() && count > kMaxListEntries)
      bad = strCat(what, " has ", count, " entries, more than the limit of ",
                   kMaxListEntries);
    if (bad.empty() && count && !items)
      bad = strCat(what, " is NULL with ", count, " entries");
    return bad.empty() ? count : 0;
  };
  Description out;
  out.target = name(args.target, args.target_len, "target");
  out.arch = name(args.arch, args.arch_len, "arch");
  out.warpSize = args.warp_size;
  size_t numFormats = list(args.formats, args.num_formats, "formats");
  for (size_t i = 0; i < numFormats && bad.empty(); ++i)
    if (const kjit_artifact_format *f = args.formats[i])
      out.formats.push_back(
          name(f->name, f->name_len, strCat("format #", i, "'s name")));
  if (bad.empty() && out.target.empty())
    bad = "it names no target";
  if (bad.empty() && out.formats.empty())
    bad = "it accepts no artifact format";
  if (bad.empty())
    for (const std::string &format : out.formats)
      if (format.empty())
        bad = "a format has an empty name";
  // A 1.0 backend never writes the 1.1 fields: they stay zero ("unknown").
  out.multiprocessorCount = args.multiprocessor_count;
  out.maxThreadsPerBlock = args.max_threads_per_block;
  out.maxSharedMemoryPerBlock = args.max_shared_memory_per_block;
  std::memcpy(out.uuid.data(), args.uuid, sizeof(args.uuid));
  size_t numOptions =
      list(args.compile_options, args.num_compile_options, "compile_options");
  for (size_t i = 0; i < numOptions && bad.empty(); ++i)
    if (const kjit_option *o = args.compile_options[i]) {
      std::string optionName =
          name(o->name, o->name_len, strCat("compile option #", i, "'s name"));
      std::string value = name(o->value, o->value_len,
                               strCat("compile option #", i, "'s value"));
      out.compileOptions.emplace_back(std::move(optionName), std::move(value));
    }
  if (bad.empty())
    bad = readSpecAttributes(p, args, out.specAttributes);
  if (!bad.empty()) {
    // Logged too: a caller that looks for another target skips this backend,
    // and a broken plugin must not go unnoticed.
    std::string message =
        strCat(p.describe(), ": describe's answer is malformed: ", bad);
    p.context.host->log(LogLevel::Error, "kjit", message);
    return absl::InternalError(message);
  }
  out.launchFlags = args.launch_flags;
  return out;
}

absl::StatusOr<std::string> BackendRef::fingerprint(int32_t device,
                                                    void *options) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.fingerprint)
    return unsupported(p, "backend", "fingerprint");
  auto args = zeroed<kjit_backend_fingerprint_args>();
  args.device = device;
  args.options_handle = options;
  args.fingerprint = emptyBuffer();
  absl::Status s = callBackend(
      p, "fingerprint", [&] { return p.backend.fingerprint(p.self, &args); });
  absl::StatusOr<std::string> bytes =
      takeBuffer(p, "fingerprint", args.fingerprint, kMaxFingerprintBytes);
  if (!s.ok())
    return s;
  return bytes;
}

absl::StatusOr<void *> BackendRef::parseOptions(
    absl::Span<const std::pair<std::string_view, std::string_view>> options)
    const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.parse_options) {
    if (!options.empty())
      return unsupported(p, "backend", "parse_options");
    return nullptr;
  }
  std::vector<kjit_option> storage(options.size());
  std::vector<const kjit_option *> pointers(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    storage[i] = zeroed<kjit_option>();
    storage[i].name = options[i].first.data();
    storage[i].name_len = options[i].first.size();
    storage[i].value = options[i].second.data();
    storage[i].value_len = options[i].second.size();
    pointers[i] = &storage[i];
  }
  auto args = zeroed<kjit_backend_parse_options_args>();
  args.num_options = pointers.size();
  args.options = pointers.empty() ? nullptr : pointers.data();
  if (absl::Status s =
          callBackend(p, "parse_options",
                      [&] { return p.backend.parse_options(p.self, &args); });
      !s.ok())
    return s;
  return args.options_handle;
}

void BackendRef::destroyOptions(void *handle) const {
  LoadedPlugin &p = *plugin;
  if (handle && p.backend.destroy_options)
    p.call([&] { p.backend.destroy_options(p.self, handle); });
}

absl::StatusOr<std::string>
BackendRef::finalize(int32_t device, std::string_view format,
                     std::string_view artifact, std::string_view kernelName,
                     void *options, std::string *info) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.finalize)
    return unsupported(p, "backend", "finalize");
  auto args = zeroed<kjit_backend_finalize_args>();
  args.format = format.data();
  args.format_len = format.size();
  args.artifact = reinterpret_cast<const uint8_t *>(artifact.data());
  args.artifact_size = artifact.size();
  args.kernel_name = kernelName.data();
  args.kernel_name_len = kernelName.size();
  args.options_handle = options;
  args.loadable = emptyBuffer();
  args.device = device;
  absl::Status s = callBackend(
      p, "finalize", [&] { return p.backend.finalize(p.self, &args); });
  absl::StatusOr<std::string> bytes =
      takeBuffer(p, "finalize", args.loadable, kMaxBufferBytes);
  absl::StatusOr<std::string> report =
      takeBuffer(p, "finalize's info", args.info, kMaxFinalizeInfoBytes);
  if (!s.ok())
    return s;
  if (!report.ok())
    return report.status();
  if (!report->empty()) {
    absl::StatusOr<rt::JsonValue> parsed = rt::parseJson(*report);
    if (!parsed.ok() || !parsed->isObject())
      return absl::InternalError(
          strCat(p.describe(), ": finalize's info is not a JSON object: ",
                 parsed.ok() ? "another JSON value"
                             : std::string(parsed.status().message())));
  }
  if (info)
    *info = std::move(*report);
  return bytes;
}

absl::StatusOr<void *> BackendRef::load(int32_t device,
                                        std::string_view loadable,
                                        std::string_view kernelName) const {
  absl::StatusOr<LoadedKernel> loaded = load(device, loadable, kernelName, {});
  if (!loaded.ok())
    return loaded.status();
  return loaded->kernel;
}

absl::StatusOr<BackendRef::LoadedKernel>
BackendRef::load(int32_t device, std::string_view loadable,
                 std::string_view kernelName,
                 absl::Span<const kjit_arg *const> argTemplate) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.load)
    return unsupported(p, "backend", "load");
  auto args = zeroed<kjit_backend_load_args>();
  args.loadable = reinterpret_cast<const uint8_t *>(loadable.data());
  args.loadable_size = loadable.size();
  args.kernel_name = kernelName.data();
  args.kernel_name_len = kernelName.size();
  args.device = device;
  args.num_args = argTemplate.size();
  args.args = argTemplate.empty() ? nullptr : argTemplate.data();
  if (absl::Status s =
          callBackend(p, "load", [&] { return p.backend.load(p.self, &args); });
      !s.ok())
    return s;
  // The runtime keeps a NULL handle as "not loaded": a success without one
  // would launch nothing, silently.
  if (!args.kernel)
    return absl::InternalError(
        strCat(p.describe(), ": load succeeded but returned no kernel handle"));
  LoadedKernel kernel;
  kernel.kernel = args.kernel;
  // Only a 1.4 backend knows the field, and only a template it was given
  // can have been checked.
  kernel.takesValues =
      p.minor >= 4 && !argTemplate.empty() && args.takes_values == 1;
  return kernel;
}

absl::Status BackendRef::launch(void *kernel, const LaunchInfo &launch,
                                const LaunchAttributes &attributes) const {
  ArgArray cArgs(launch.args);
  auto args = zeroed<kjit_backend_launch_args>();
  args.kernel = kernel;
  for (int i = 0; i < 3; ++i)
    args.grid[i] = launch.grid[i];
  args.num_warps = launch.numWarps;
  args.shared_memory_bytes = attributes.sharedMemoryBytes;
  args.stream = launch.stream;
  args.num_args = cArgs.size();
  args.args = cArgs.data();
  args.flags = attributes.flags;
  for (int i = 0; i < 3; ++i)
    args.cluster[i] = attributes.cluster[i];
  return launchPrepared(args);
}

absl::StatusOr<uint32_t> BackendRef::specialize(int32_t device, uint32_t param,
                                                int32_t dtype, uint32_t flags,
                                                uint64_t bits) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.specialize)
    return unsupported(p, "backend", "specialize");
  auto args = zeroed<kjit_backend_specialize_args>();
  args.device = device;
  args.param_index = param;
  args.dtype = dtype;
  args.flags = flags;
  args.bits = bits;
  if (absl::Status s = callBackend(
          p, "specialize", [&] { return p.backend.specialize(p.self, &args); });
      !s.ok())
    return s;
  return args.attributes;
}

namespace {
/// launchPrepared's refusals, out of its code (which every launch runs).
ABSL_ATTRIBUTE_NOINLINE absl::Status
refuseLaunch(const LoadedPlugin &p, const kjit_backend_launch_args &args) {
  if (!p.backend.launch)
    return unsupported(p, "backend", "launch");
  // A backend built against 1.0 cannot see flags or clusters; running the
  // launch without them would silently change what it means.
  return absl::UnimplementedError(
      strCat(p.describe(), ": launch flags 0x", absl::Hex(args.flags),
             " or clusters (", args.cluster[0], ",", args.cluster[1], ",",
             args.cluster[2],
             ") need a backend of ABI 1.1, but this one was built for ABI 1.",
             p.minor));
}
} // namespace

// Aligned to a line of code, as Kernel::launch is (KernelLaunch.cpp).
[[gnu::aligned(64)]] absl::Status
BackendRef::launchPrepared(kjit_backend_launch_args &args) const {
  LoadedPlugin &p = *plugin;
  if (ABSL_PREDICT_FALSE(!p.backend.launch ||
                         (p.minor < 1 && (args.flags | args.cluster[0] |
                                          args.cluster[1] | args.cluster[2]))))
    return refuseLaunch(p, args);
  return callBackend(p, "launch",
                     [&] { return p.backend.launch(p.self, &args); });
}

absl::Status BackendRef::synchronize(int32_t device, uint64_t stream) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.synchronize)
    return absl::OkStatus(); // launches are synchronous: nothing to wait for
  auto args = zeroed<kjit_backend_synchronize_args>();
  args.device = device;
  args.stream = stream;
  return callBackend(p, "synchronize",
                     [&] { return p.backend.synchronize(p.self, &args); });
}

bool BackendRef::hasDeviceMemory() const {
  const LoadedPlugin &p = *plugin;
  return p.backend.allocate && p.backend.deallocate && p.backend.copy;
}

absl::StatusOr<uint64_t> BackendRef::allocate(int32_t device,
                                              uint64_t size) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.allocate)
    return unsupported(p, "backend", "allocate");
  if (size == 0)
    return absl::InvalidArgumentError("cannot allocate 0 bytes");
  auto args = zeroed<kjit_backend_allocate_args>();
  args.device = device;
  args.size = size;
  if (absl::Status s = callBackend(
          p, "allocate", [&] { return p.backend.allocate(p.self, &args); });
      !s.ok())
    return s;
  if (args.address == 0)
    return absl::InternalError(
        strCat(p.describe(), ": allocate returned no address"));
  return args.address;
}

absl::Status BackendRef::deallocate(int32_t device, uint64_t address) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.deallocate)
    return unsupported(p, "backend", "deallocate");
  auto args = zeroed<kjit_backend_deallocate_args>();
  args.device = device;
  args.address = address;
  return callBackend(p, "deallocate",
                     [&] { return p.backend.deallocate(p.self, &args); });
}

namespace {
absl::Status copyThrough(LoadedPlugin &p, int32_t device, uint32_t direction,
                         uint64_t address, void *host, uint64_t size,
                         uint64_t stream) {
  if (!p.backend.copy)
    return unsupported(p, "backend", "copy");
  auto args = zeroed<kjit_backend_copy_args>();
  args.device = device;
  args.direction = direction;
  args.address = address;
  args.host = host;
  args.size = size;
  args.stream = stream;
  return callBackend(p, "copy", [&] { return p.backend.copy(p.self, &args); });
}
} // namespace

absl::Status BackendRef::copyToDevice(int32_t device, uint64_t address,
                                      const void *host, uint64_t size,
                                      uint64_t stream) const {
  // The plugin only reads `host` for this direction.
  return copyThrough(*plugin, device, KJIT_COPY_HOST_TO_DEVICE, address,
                     const_cast<void *>(host), size, stream);
}

absl::Status BackendRef::copyToHost(int32_t device, void *host,
                                    uint64_t address, uint64_t size,
                                    uint64_t stream) const {
  return copyThrough(*plugin, device, KJIT_COPY_DEVICE_TO_HOST, address, host,
                     size, stream);
}

absl::Status BackendRef::unload(void *kernel) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.unload)
    return unsupported(p, "backend", "unload");
  auto args = zeroed<kjit_backend_unload_args>();
  args.kernel = kernel;
  return callBackend(p, "unload",
                     [&] { return p.backend.unload(p.self, &args); });
}
