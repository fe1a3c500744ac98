//===- Module.cpp - kernel IR files and their globals ---------------------===//

#include "RuntimeImpl.h"

#include "CacheKey.h"
#include "RemoteCache.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Model/FloatFormats.h"
#include "kjit/Model/GlobalPath.h"
#include "kjit/Model/Json.h"
#include "kjit/Support/StrCat.h"

#include "kjit/Model/InputFile.h"

#include <chrono>

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kjit::rt {

//===----------------------------------------------------------------------===//
// Global values
//===----------------------------------------------------------------------===//

namespace {

std::string formatDouble(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, end);
  // Floats read as floats: "2.0", not "2".
  if (text.find_first_of(".eEn") == std::string::npos)
    text += ".0";
  return text;
}

} // namespace

std::string formatGlobalValue(DType type, uint64_t bits) {
  if (type == DType::FP64) {
    double value;
    std::memcpy(&value, &bits, 8);
    return formatDouble(value);
  }
  if (type == DType::FP32) {
    float value;
    uint32_t narrow = uint32_t(bits);
    std::memcpy(&value, &narrow, 4);
    return formatDouble(value);
  }
  if (type == DType::FP16)
    return formatDouble(fp16ToDouble(uint16_t(bits)));
  if (type == DType::BF16)
    return formatDouble(bf16ToDouble(uint16_t(bits)));
  if (isFloat(type)) // fp8: the bits, as the host has no such format
    return kjit::strCat("0x", absl::Hex(bits));
  unsigned width = bitWidth(type);
  if (width == 1)
    return bits ? "True" : "False";
  // Sign-extend to print negative values as such.
  int64_t value = width < 64 ? int64_t(bits << (64 - width)) >> (64 - width)
                             : int64_t(bits);
  return std::to_string(value);
}

absl::StatusOr<uint64_t> globalBits(std::string_view name, DType type,
                                    const Argument &value) {
  unsigned width = bitWidth(type);
  // Messages spell the type as the module declares it ("f32").
  std::string_view typeName = kernelIRTypeName(type);
  if (typeName.empty())
    typeName = canonicalName(type);
  if (isFloat(type)) {
    double real;
    if (value.kind() == ArgKind::Float)
      real = value.asFloat();
    else if (value.kind() == ArgKind::Int)
      real = double(value.asInt());
    else
      return absl::InvalidArgumentError(
          kjit::strCat("global '", name, "' has type ", typeName,
                       " and needs a number, not ", describeArgument(value)));
    if (type == DType::FP64) {
      uint64_t bits;
      std::memcpy(&bits, &real, 8);
      return bits;
    }
    // A finite value the type cannot hold is an error, not a silent inf
    //; an infinity asked for stays one.
    if (roundsToInfinity(type, real))
      return absl::OutOfRangeError(kjit::strCat(
          "global '", name, "' of type ", typeName, " cannot hold ",
          describeArgument(value), ": it is past the largest finite ", typeName,
          " and would become infinity"));
    // Straight from the double: through float would round twice.
    if (type == DType::FP16)
      return uint64_t(fp16FromDouble(real));
    if (type == DType::BF16)
      return uint64_t(bf16FromDouble(real));
    if (type != DType::FP32)
      return absl::InvalidArgumentError(
          kjit::strCat("global '", name, "' has type ", typeName,
                       ", which the host cannot set"));
    float narrow = float(real);
    uint32_t bits;
    std::memcpy(&bits, &narrow, 4);
    return uint64_t(bits);
  }
  if (value.kind() != ArgKind::Int && value.kind() != ArgKind::Bool)
    return absl::InvalidArgumentError(
        kjit::strCat("global '", name, "' has type ", typeName,
                     " and needs an integer, not ", describeArgument(value)));
  Int128 integer = value.asInt();
  Int128 limit = Int128(1) << width;
  // Signed or unsigned range of the width, as kjit.global's parser accepts.
  if (integer >= limit || integer < -(limit >> 1))
    return absl::OutOfRangeError(kjit::strCat("global '", name, "' of type ",
                                              typeName, " cannot hold ",
                                              describeArgument(value)));
  uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  return uint64_t(integer) & mask;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

absl::StatusOr<std::shared_ptr<Module>> Module::load(Runtime &runtime,
                                                     std::string path) {
  absl::StatusOr<std::string> text =
      readInputFile(path, kMaxKernelFileBytes, "kernel IR file");
  if (!text.ok())
    return text.status();
  return fromText(runtime, *std::move(text), std::move(path));
}

absl::StatusOr<std::shared_ptr<Module>> Module::load(std::string path) {
  return load(Runtime::global(), std::move(path));
}

absl::StatusOr<std::shared_ptr<Module>>
Module::fromText(std::string text, std::string sourceName) {
  return fromText(Runtime::global(), std::move(text), std::move(sourceName));
}

//===----------------------------------------------------------------------===//
// Manifests in the disk cache
//===----------------------------------------------------------------------===//

/// A module's analysis without its bytecode, as a manifest entry's
/// metadata: {"source": NAME, "kernels": [{"manifest": {MANIFEST},
/// "dependency_key": KEY, "used_globals": [NAME...], "source_digests":
/// [[FUNCTION, DIGEST]...]}...], "globals":
/// [{"name": NAME, "type": DTYPE, "bits": N}...]}.
std::string analysisToJson(const ModuleAnalysis &analysis,
                           std::string_view sourceName) {
  std::string out;
  JsonWriter json(out);
  json.beginObject().key("source").string(sourceName).key("kernels");
  json.beginArray();
  for (const KernelAnalysis &kernel : analysis.kernels) {
    json.beginObject()
        .key("manifest")
        .raw(manifestToJson(kernel.manifest))
        .key("dependency_key")
        .string(kernel.dependencyKey)
        .key("used_globals")
        .beginArray();
    for (const std::string &name : kernel.usedGlobals)
      json.string(name);
    json.endArray().key("source_digests").beginArray();
    for (const auto &[function, digest] : kernel.sourceDigests)
      json.beginArray().string(function).string(digest).endArray();
    json.endArray().endObject();
  }
  json.endArray().key("invalid_kernels").beginArray();
  for (const auto &[name, message] : analysis.invalidKernels)
    json.beginObject()
        .key("name")
        .string(name)
        .key("message")
        .string(message)
        .endObject();
  json.endArray().key("globals").beginArray();
  for (const GlobalInfo &global : analysis.globals)
    json.beginObject()
        .key("name")
        .string(global.name)
        .key("type")
        .string(canonicalName(global.type))
        .key("bits")
        .integer(Int128(global.bits))
        .endObject();
  json.endArray().endObject();
  return out;
}

namespace {

/// `text` with every `from` replaced by `to`.
std::string replaceAll(std::string text, std::string_view from,
                       std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// What a fresh analysis of the same text by the same build gives again:
/// the analysis without its bytecode and with invalid kernels by name only
/// (the wording of their diagnostics is not part of it).
std::string comparableAnalysis(const ModuleAnalysis &analysis) {
  ModuleAnalysis comparable;
  comparable.kernels = analysis.kernels;
  comparable.globals = analysis.globals;
  for (const auto &[name, message] : analysis.invalidKernels)
    comparable.invalidKernels.push_back({name, std::string()});
  return analysisToJson(comparable, std::string_view());
}

} // namespace

absl::StatusOr<ModuleAnalysis> analysisFromJson(std::string_view text,
                                                std::string_view sourceName) {
  absl::StatusOr<JsonValue> parsed = parseJson(text);
  if (!parsed.ok())
    return parsed.status();
  auto bad = [](const std::string &what) {
    return absl::DataLossError(kjit::strCat("manifest entry: ", what));
  };
  const JsonValue *kernels = parsed->find("kernels");
  const JsonValue *globals = parsed->find("globals");
  if (!parsed->isObject() || !kernels || !kernels->isArray() || !globals ||
      !globals->isArray())
    return bad("no kernels or globals");
  ModuleAnalysis analysis;
  for (const JsonValue &kernel : kernels->elements()) {
    const JsonValue *manifest = kernel.find("manifest");
    const JsonValue *key = kernel.find("dependency_key");
    const JsonValue *used = kernel.find("used_globals");
    if (!kernel.isObject() || !manifest || !manifest->isObject() || !key ||
        !key->isString() || !used || !used->isArray())
      return bad("a kernel lacks its manifest, key or globals");
    absl::StatusOr<KernelManifest> decoded = manifestFromJsonValue(*manifest);
    if (!decoded.ok())
      return decoded.status();
    KernelAnalysis entry;
    entry.manifest = std::move(*decoded);
    entry.dependencyKey = key->text();
    for (const JsonValue &name : used->elements()) {
      if (!name.isString())
        return bad("a used global is not a name");
      entry.usedGlobals.push_back(name.text());
    }
    // Optional: manifests written before the recompile log named functions.
    if (const JsonValue *digests = kernel.find("source_digests")) {
      if (!digests->isArray())
        return bad("source_digests is not a list");
      for (const JsonValue &pair : digests->elements()) {
        if (!pair.isArray() || pair.elements().size() != 2 ||
            !pair.elements()[0].isString() || !pair.elements()[1].isString())
          return bad("a source digest is not a [function, digest] pair");
        entry.sourceDigests.emplace_back(pair.elements()[0].text(),
                                         pair.elements()[1].text());
      }
    }
    analysis.kernels.push_back(std::move(entry));
  }
  if (const JsonValue *invalid = parsed->find("invalid_kernels")) {
    if (!invalid->isArray())
      return bad("invalid_kernels is not a list");
    const JsonValue *writer = parsed->find("source");
    std::string writerSource =
        writer && writer->isString() ? writer->text() : std::string();
    for (const JsonValue &kernel : invalid->elements()) {
      const JsonValue *name = kernel.find("name");
      const JsonValue *message = kernel.find("message");
      if (!kernel.isObject() || !name || !name->isString() || !message ||
          !message->isString())
        return bad("an invalid kernel lacks its name or message");
      analysis.invalidKernels.push_back(
          {name->text(),
           writerSource.empty()
               ? message->text()
               : replaceAll(message->text(), writerSource, sourceName)});
    }
  }
  for (const JsonValue &global : globals->elements()) {
    const JsonValue *name = global.find("name");
    const JsonValue *type = global.find("type");
    const JsonValue *bits = global.find("bits");
    std::optional<DType> dtype =
        type && type->isString() ? parseDType(type->text()) : std::nullopt;
    Int128 value = -1;
    if (bits && bits->isNumber())
      value = bits->asInteger().value_or(-1);
    if (!global.isObject() || !name || !name->isString() || !dtype ||
        value < 0 || value > Int128(UINT64_MAX))
      return bad("a global is malformed");
    analysis.globals.push_back({name->text(), *dtype, uint64_t(value)});
  }
  return analysis;
}

namespace {

/// Stores a module's analysis (`json`, analysisToJson's) under `key` in
/// the disk cache and the fleet cache, where they are open; `replace`: the
/// fleet cache's value for the key is a bad one to overwrite.
void storeManifest(std::string_view key, std::string json,
                   cache::DiskCache *disk, RemoteCache *remote, bool replace) {
  if (!disk && !remote)
    return;
  cache::EntryData entry;
  entry.kind = cache::EntryKind::Manifest;
  entry.key = std::string(key);
  entry.createdNanos =
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count());
  entry.metadata = std::move(json);
  if (disk)
    disk->put(entry);
  if (remote)
    remote->publish(std::move(entry), replace);
}

} // namespace

absl::Status Module::Impl::ensureBytecode() {
  std::call_once(bytecodeOnce, [&] {
    if (!bytecode.empty())
      return;
    absl::StatusOr<CompilerService *> compiler = runtime->compiler();
    if (!compiler.ok()) {
      bytecodeStatus = compiler.status();
      return;
    }
    absl::StatusOr<ModuleAnalysis> analysis =
        (*compiler)->analyze(text, sourceName);
    if (!analysis.ok()) {
      bytecodeStatus = analysis.status();
      return;
    }
    // The manifest's key covers the text and the build, so the analyses
    // agree unless someone who may write the cache (or a fleet member)
    // wrote another analysis under it. The module's kernels were made from
    // the cached one: their parameters, defaults, launch options, keys and
    // the globals they check. So all of it is compared, not just the keys;
    // on a difference this compile is refused (the module must be loaded
    // again) and the entry is replaced by the fresh analysis, so that the
    // next load is right.
    if (cachedAnalysis &&
        comparableAnalysis(*cachedAnalysis) != comparableAnalysis(*analysis)) {
      const char *why = "it disagrees with a fresh analysis";
      cache::DiskCache *disk = runtime->diskCache();
      RemoteCache *remote =
          manifestFromRemote ? runtime->remoteCache() : nullptr;
      if (disk)
        disk->reject(manifestKey, why);
      if (remote)
        remote->reject(manifestKey, why);
      storeManifest(manifestKey, analysisToJson(*analysis, sourceName), disk,
                    remote,
                    /*replace=*/true);
      bytecodeStatus = absl::InternalError(kjit::strCat(
          "the cached analysis of ", sourceName,
          " disagrees with a fresh one (it was replaced); load it again"));
      return;
    }
    cachedAnalysis.reset();
    bytecode = std::move(analysis->bytecode);
    text.clear();
    text.shrink_to_fit();
  });
  return bytecodeStatus;
}

absl::StatusOr<std::shared_ptr<Module>>
Module::fromText(Runtime &runtime, std::string text, std::string sourceName) {
  auto build =
      [&](ModuleAnalysis analysis) -> absl::StatusOr<std::shared_ptr<Module>> {
    auto impl = std::make_unique<Impl>();
    impl->runtime = &runtime;
    impl->bytecode = std::move(analysis.bytecode);
    impl->sourceName = sourceName;
    for (GlobalInfo &global : analysis.globals) {
      impl->globalIndex[global.name] = impl->globals.size();
      impl->globals.push_back(
          {std::move(global.name), global.type, global.bits});
    }
    impl->invalidKernels = std::move(analysis.invalidKernels);
    std::shared_ptr<Module> module(new Module(std::move(impl)));
    for (KernelAnalysis &entry : analysis.kernels) {
      std::string name = entry.manifest.name;
      absl::StatusOr<std::unique_ptr<Kernel>> kernel =
          makeKernel(module->impl_.get(), std::move(entry));
      // One bad kernel does not make its module unusable.
      if (!kernel.ok())
        module->impl_->invalidKernels.push_back(
            {std::move(name), std::string(kernel.status().message())});
      else
        module->impl_->kernels.push_back(std::move(*kernel));
    }
    return module;
  };

  // A warm process finds the analysis in the disk cache, keyed by the
  // file's bytes, and does not open the compiler (docs/DiskCache.md); a
  // machine of a fleet may find it in the fleet cache (docs/RemoteCache.md).
  auto fromManifest =
      [&](const cache::EntryData &entry,
          bool fromRemote) -> absl::StatusOr<std::shared_ptr<Module>> {
    absl::StatusOr<ModuleAnalysis> analysis =
        analysisFromJson(entry.metadata, sourceName);
    if (!analysis.ok())
      return analysis.status();
    ModuleAnalysis cached = *analysis;
    absl::StatusOr<std::shared_ptr<Module>> module =
        build(std::move(*analysis));
    if (module.ok()) {
      Impl &impl = *(*module)->impl_;
      impl.text = text;
      impl.manifestKey = entry.key;
      impl.cachedAnalysis = std::move(cached);
      impl.manifestFromRemote = fromRemote;
    }
    return module;
  };
  cache::DiskCache *disk = runtime.diskCache();
  RemoteCache *remote = runtime.remoteCache();
  std::string key;
  if (disk || remote)
    key = rt::manifestKey(runtime.buildIdentity(), text);
  if (disk) {
    cache::DiskCache::Lookup lookup =
        disk->get(cache::EntryKind::Manifest, key);
    if (lookup.result == cache::DiskCache::Lookup::Result::Hit) {
      absl::StatusOr<std::shared_ptr<Module>> module =
          fromManifest(lookup.entry, /*fromRemote=*/false);
      if (module.ok())
        return module;
      disk->reject(key, std::string(module.status().message()));
    }
  }
  bool replaceable = false;
  if (remote) {
    if (std::optional<cache::EntryData> entry =
            remote->get(key, &replaceable, cache::EntryKind::Manifest)) {
      absl::StatusOr<std::shared_ptr<Module>> module =
          fromManifest(*entry, /*fromRemote=*/true);
      if (module.ok()) {
        remote->hit();
        if (disk)
          disk->put(*entry);
        return module;
      }
      replaceable = true;
      remote->reject(key, std::string(module.status().message()));
    }
  }

  absl::StatusOr<CompilerService *> compiler = runtime.compiler();
  if (!compiler.ok())
    return compiler.status();
  absl::StatusOr<ModuleAnalysis> analysis =
      (*compiler)->analyze(text, sourceName);
  if (!analysis.ok())
    return analysis.status();
  std::string manifestJson =
      disk || remote ? analysisToJson(*analysis, sourceName) : std::string();
  absl::StatusOr<std::shared_ptr<Module>> module = build(std::move(*analysis));
  if (!module.ok() || !(disk || remote))
    return module;
  (*module)->impl_->manifestKey = key;
  storeManifest(key, std::move(manifestJson), disk, remote, replaceable);
  return module;
}

Module::Module(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;

absl::StatusOr<Kernel *> Module::kernel(std::string_view name) {
  for (auto &kernel : impl_->kernels)
    if (kernel->manifest().name == name)
      return kernel.get();
  for (const auto &[invalid, message] : impl_->invalidKernels)
    if (invalid == name)
      return absl::InvalidArgumentError(message);
  std::string known;
  for (const std::string &other : kernelNames())
    known += (known.empty() ? "" : ", ") + other;
  return absl::NotFoundError(
      kjit::strCat("no kernel named '", name, "' in ", impl_->sourceName,
                   " (kernels: ", known.empty() ? "none" : known, ")"));
}

std::vector<std::string> Module::kernelNames() const {
  std::vector<std::string> names;
  for (const auto &kernel : impl_->kernels)
    names.push_back(kernel->manifest().name);
  return names;
}

absl::StatusOr<size_t> Module::Impl::findGlobal(std::string_view name) const {
  if (auto it = globalIndex.find(std::string(name)); it != globalIndex.end())
    return it->second;
  if (!rt::isGlobalPath(name))
    return absl::InvalidArgumentError(kjit::strCat(
        "'", name,
        "' is not a global name: a global of the top module is named by "
        "its symbol (SCALE), one of a nested module by the module path and "
        "the symbol joined by '::' (inner::SCALE)"));
  std::vector<std::string_view> names;
  for (const GlobalSlot &slot : globals)
    names.push_back(slot.name);
  std::sort(names.begin(), names.end());
  std::string known;
  for (std::string_view other : names)
    kjit::strAppend(&known, known.empty() ? "" : ", ", other);
  std::string list =
      kjit::strCat(" (globals: ", known.empty() ? "none" : known, ")");
  rt::GlobalPathLeaf leaf = rt::splitGlobalPathLeaf(name);
  if (leaf.module.empty())
    return absl::NotFoundError(
        kjit::strCat("no global named '", name, "' in ", sourceName, list));
  bool moduleHasGlobals =
      std::any_of(names.begin(), names.end(), [&](std::string_view other) {
        return rt::splitGlobalPathLeaf(other).module == leaf.module;
      });
  if (moduleHasGlobals)
    return absl::NotFoundError(kjit::strCat(
        "no global named '", name, "' in ", sourceName, ": module '",
        leaf.module, "' has no global '", leaf.symbol, "'", list));
  return absl::NotFoundError(kjit::strCat("no global named '", name, "' in ",
                                          sourceName, ": there is no module '",
                                          leaf.module, "' with globals", list));
}

absl::Status Module::setGlobal(std::string_view name, const Argument &value) {
  std::lock_guard<std::mutex> lock(impl_->globalsMutex);
  absl::StatusOr<size_t> index = impl_->findGlobal(name);
  if (!index.ok())
    return index.status();
  GlobalSlot &slot = impl_->globals[*index];
  absl::StatusOr<uint64_t> bits = globalBits(name, slot.type, value);
  if (!bits.ok())
    return bits.status();
  if (*bits != slot.bits) {
    slot.bits = *bits;
    // Kernels compare their baked-in values only when this moved.
    impl_->globalsVersion.fetch_add(1, std::memory_order_release);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Module::global(std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->globalsMutex);
  absl::StatusOr<size_t> index = impl_->findGlobal(name);
  if (!index.ok())
    return index.status();
  const GlobalSlot &slot = impl_->globals[*index];
  return formatGlobalValue(slot.type, slot.bits);
}

} // namespace kjit::rt
