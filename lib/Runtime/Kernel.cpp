//===- Kernel.cpp - a kernel: globals, warmup, preload --------------------===//
//
// The kernel object and what is not the cache (KernelCache.cpp), the miss
// (KernelCompile.cpp) or the hit path (KernelLaunch.cpp): the globals
// check, warmup and preload.
//
//===----------------------------------------------------------------------===//

#include "BackendSpecializer.h"
#include "KernelImpl.h"
#include "kjit/Model/GlobalPath.h"

namespace kjit::rt {

using kjit::escapeControl;
using kjit::strCat;

namespace {
/// A unique id per kernel, so that per-thread state never confuses a
/// destroyed kernel with a new one at the same address.
std::atomic<uint64_t> nextKernelId{1};
} // namespace

Argument reinterpret(const Argument &tensor, DType dtype) {
  if (tensor.kind() != ArgKind::Tensor)
    return tensor;
  Argument result =
      tensor.isMock()
          ? Argument::mockTensor(dtype, tensor.isReadOnly())
          : Argument::tensor(tensor.address(), dtype, tensor.isReadOnly());
  return result;
}

absl::Status Kernel::Impl::checkAssignedGlobals(uint64_t version) {
  std::lock_guard<std::mutex> lock(globalsMutex);
  std::lock_guard<std::mutex> globalsLock(module->globalsMutex);
  std::vector<uint64_t> current;
  for (const std::string &name : usedGlobals)
    current.push_back(module->globals[module->globalIndex.at(name)].bits);
  if (!baked) {
    bakedBits = current;
    baked = true;
  }
  for (size_t i = 0; i < usedGlobals.size(); ++i) {
    if (current[i] == bakedBits[i])
      continue;
    const GlobalSlot &slot =
        module->globals[module->globalIndex.at(usedGlobals[i])];
    if (policy == GlobalChangePolicy::Error)
      return absl::FailedPreconditionError(
          strCat("Global variable ", describeGlobal(usedGlobals[i]),
                 " has changed since we compiled this kernel, from ",
                 formatGlobalValue(slot.type, bakedBits[i]), " to ",
                 formatGlobalValue(slot.type, current[i])));
    // Recompile: the new values are baked first, then the entries baked
    // with the old ones are dropped, so an entry in the new maps never
    // holds old values. (A launch racing with the change may still run an
    // old entry once.)
    bakedBits = current;
    dispatch.clear();
    break;
  }
  checkedVersion.store(version, std::memory_order_release);
  return absl::OkStatus();
}

const absl::StatusOr<const Backend *> &Kernel::Impl::findBackend() {
  std::call_once(backendOnce, [&] {
    backend = module->runtime->backend();
    // The dispatch cache gets a table per device the backend drives; one
    // that cannot say how many drives none here, and checkDevice reports
    // why.
    absl::StatusOr<int32_t> count = backend.ok() ? (*backend)->ref.deviceCount()
                                                 : absl::StatusOr<int32_t>(0);
    dispatch.setDeviceCount(count.ok() ? *count : 0);
    backendFound.store(true, std::memory_order_release);
  });
  return backend;
}

absl::Status
Kernel::Impl::refuseDevice(const absl::StatusOr<const Backend *> &found,
                           int32_t device) {
  if (!found.ok())
    return found.status();
  if (device < 0)
    return absl::InvalidArgumentError(
        strCat("device ", device,
               " does not exist: devices are numbered "
               "from 0"));
  // The runtime's refusal names the backend and its count (or says why it
  // has none).
  absl::StatusOr<const DeviceDescription *> described =
      module->runtime->device(**found, device);
  if (!described.ok())
    return described.status();
  // The backend drives the device now but did not when the kernel found
  // it (a count it could not give then): not served.
  return absl::FailedPreconditionError(
      strCat("device ", device, " of the backend for target '",
             (*found)->target, "' was not available when kernel '",
             manifest.name, "' first ran; load the module again"));
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

absl::StatusOr<std::unique_ptr<Kernel>> makeKernel(Module::Impl *module,
                                                   KernelAnalysis analysis) {
  KernelManifest &manifest = analysis.manifest;
  auto impl = std::make_unique<Kernel::Impl>();
  impl->id = nextKernelId.fetch_add(1);
  impl->module = module;
  impl->host = &module->runtime->plugins();
  absl::StatusOr<BindPlan> plan =
      BindPlan::create(manifest, module->runtime->defaultLaunchOptions());
  if (!plan.ok())
    return plan.status();
  impl->plan.emplace(std::move(*plan));
  impl->manifest = std::move(manifest);
  impl->dependencyKey = std::move(analysis.dependencyKey);
  impl->sourceDigests = std::move(analysis.sourceDigests);
  for (const std::string &name : analysis.usedGlobals)
    if (!module->globalIndex.contains(name))
      return absl::InternalError(strCat("kernel '", impl->manifest.name,
                                        "' reads unknown global '", name, "'"));
  impl->usedGlobals = std::move(analysis.usedGlobals);
  return std::unique_ptr<Kernel>(new Kernel(std::move(impl)));
}

void Kernel::Impl::unloadAll() {
  if (unloaded.exchange(true))
    return;
  // Only a kernel that found its backend has entries.
  if (!backendFound.load(std::memory_order_acquire) || !backend.ok())
    return;
  const Backend &owner = **backend;
  dispatch.forEachEntry([&](Entry &entry) {
    if (entry.state.load(std::memory_order_acquire) == Entry::State::Ready)
      if (absl::Status s = owner.ref.unload(entry.backendKernel); !s.ok())
        host->log(plugin::LogLevel::Warning, "kjit",
                  strCat("kernel '", manifest.name,
                         "' was not unloaded: ", std::string(s.message())));
  });
}

Kernel::Impl &kernelImpl(Kernel &kernel) { return *kernel.impl_; }

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  Impl *self = impl_.get();
  self->shutdownToken =
      self->host->addShutdownCallback([self] { self->unloadAll(); });
}
Kernel::~Kernel() {
  // Removing the callback waits for it if shutdown is running it now; then
  // exactly one of the two unloads.
  impl_->host->removeShutdownCallback(impl_->shutdownToken);
  impl_->unloadAll();
}

const KernelManifest &Kernel::manifest() const { return impl_->manifest; }
const std::string &Kernel::dependencyKey() const {
  return impl_->dependencyKey;
}

namespace {
/// Binds into `binding` as a launch on `device` would: with the backend's
/// attributes, which stay in `specializer` for the record.
absl::Status bindFor(Kernel::Impl &impl, absl::Span<const Argument> positional,
                     absl::Span<const KeywordArgument> keywords, int32_t device,
                     Binding &binding,
                     std::optional<BackendSpecializer> &specializer) {
  if (std::optional<BackendSpecializer> made =
          BackendSpecializer::forBackend(impl.getBackend(), device))
    specializer.emplace(*made);
  return impl.plan->bind(positional, keywords, binding,
                         specializer ? &*specializer : nullptr);
}
} // namespace

absl::Status Kernel::checkArguments(absl::Span<const Argument> positional,
                                    absl::Span<const KeywordArgument> keywords,
                                    int32_t device) {
  Binding binding = impl_->plan->makeBinding();
  std::optional<BackendSpecializer> specializer;
  return bindFor(*impl_, positional, keywords, device, binding, specializer);
}

absl::StatusOr<SpecializationRecord>
Kernel::warmup(absl::Span<const Argument> positional,
               absl::Span<const KeywordArgument> keywords, int32_t device) {
  Impl &impl = *impl_;
  if (absl::Status hooks = impl.runPreRunHooks(positional, keywords);
      !hooks.ok())
    return hooks;
  Binding binding = impl.plan->makeBinding();
  std::optional<BackendSpecializer> specializer;
  if (absl::Status bound =
          bindFor(impl, positional, keywords, device, binding, specializer);
      !bound.ok())
    return bound;
  const BackendAttributes *attributes = specializer ? &*specializer : nullptr;
  if (absl::Status globals = impl.checkGlobals(); !globals.ok())
    return globals;
  SpecializationRecord record = impl.plan->makeRecord(binding, attributes);
  if (absl::Status valid = impl.checkDevice(device); !valid.ok())
    return valid;
  absl::Status status;
  impl.ensureEntry(
      device, binding.key(), [&] { return record; }, /*isWarmup=*/true, status,
      /*compiled=*/nullptr);
  if (!status.ok())
    return status;
  // Where the record was made, for preload to check in another process:
  // the device's arch, which the entry was compiled for (the entry is
  // ready, so the backend and the device's description were found).
  if (const absl::StatusOr<const Backend *> &backend = impl.getBackend();
      backend.ok()) {
    absl::StatusOr<const DeviceDescription *> described =
        impl.module->runtime->device(**backend, device);
    if (!described.ok())
      return described.status();
    record.target = (*backend)->target;
    record.arch = (*described)->arch;
  }
  record.sourceHash = impl.dependencyKey;
  return record;
}

absl::Status Kernel::preload(std::string_view recordJson, int32_t device) {
  Impl &impl = *impl_;
  absl::StatusOr<SpecializationRecord> record =
      specializationFromJson(recordJson);
  if (!record.ok())
    return record.status();
  if (record->name != impl.manifest.name)
    return absl::InvalidArgumentError(
        strCat("the record is for kernel '", escapeControl(record->name),
               "', not '", impl.manifest.name, "'"));
  if (absl::Status valid = impl.checkDevice(device); !valid.ok())
    return valid;
  if (!record->target.empty()) {
    const absl::StatusOr<const Backend *> &backend = impl.getBackend();
    if (!backend.ok())
      return backend.status();
    // Checked against the device it is preloaded on: a record warmed up on
    // a device of another arch would compile code that device cannot run.
    absl::StatusOr<const DeviceDescription *> described =
        impl.module->runtime->device(**backend, device);
    if (!described.ok())
      return described.status();
    if (record->target != (*backend)->target ||
        record->arch != (*described)->arch)
      return absl::FailedPreconditionError(
          strCat("the record of kernel '", impl.manifest.name,
                 "' was made for target '", escapeControl(record->target),
                 "' (", escapeControl(record->arch),
                 "), but this runtime launches on '", (*backend)->target, "' (",
                 (*described)->arch, ") on device ", device));
  }
  if (!record->sourceHash.empty() && record->sourceHash != impl.dependencyKey)
    return absl::FailedPreconditionError(strCat(
        "the record of kernel '", impl.manifest.name,
        "' was made for another version of it: its source, a callee or a "
        "global it reads has changed since; warm it up again"));
  std::optional<BackendSpecializer> specializer =
      BackendSpecializer::forBackend(impl.getBackend(), device);
  absl::StatusOr<SpecializationKey> key =
      impl.plan->keyForRecord(*record, specializer ? &*specializer : nullptr);
  if (!key.ok())
    return key.status();
  if (absl::Status globals = impl.checkGlobals(); !globals.ok())
    return globals;
  absl::Status status;
  impl.ensureEntry(
      device, key->view(), [&] { return *record; }, /*isWarmup=*/true, status,
      /*compiled=*/nullptr);
  return status;
}

void Kernel::setGlobalChangePolicy(GlobalChangePolicy policy) {
  std::lock_guard<std::mutex> lock(impl_->globalsMutex);
  impl_->policy = policy;
}

void Kernel::setLaunchMetadata(
    std::function<std::string(absl::Span<const Argument>)> callback) {
  impl_->launchMetadata.set(std::move(callback));
}

KernelStats Kernel::stats() const {
  return {impl_->compiles.load(), impl_->diskHits.load(),
          impl_->remoteHits.load()};
}

} // namespace kjit::rt
