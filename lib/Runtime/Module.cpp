//===- Module.cpp - kernel IR files and their globals ---------------------===//

#include "RuntimeImpl.h"

#include "CompilerLibrary.h"
#include "kjit/Support/StrCat.h"

#include "kjit/Model/FloatFormats.h"
#include "kjit/Model/Json.h"

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

unsigned widthOf(std::string_view type) {
  if (type == "i1")
    return 1;
  if (type == "f16" || type == "bf16")
    return 16;
  if (type == "f64")
    return 64;
  if (type == "f32")
    return 32;
  unsigned width = 0;
  if (type.size() > 1 && type[0] == 'i')
    std::from_chars(type.data() + 1, type.data() + type.size(), width);
  return width;
}

bool isFloatType(std::string_view type) {
  return !type.empty() && (type[0] == 'f' || type[0] == 'b');
}

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

std::string formatGlobalValue(std::string_view type, uint64_t bits) {
  if (type == "f64") {
    double value;
    std::memcpy(&value, &bits, 8);
    return formatDouble(value);
  }
  if (type == "f32") {
    float value;
    uint32_t narrow = uint32_t(bits);
    std::memcpy(&value, &narrow, 4);
    return formatDouble(value);
  }
  if (type == "f16")
    return formatDouble(fp16ToDouble(uint16_t(bits)));
  if (type == "bf16")
    return formatDouble(bf16ToDouble(uint16_t(bits)));
  unsigned width = widthOf(type);
  if (width == 1)
    return bits ? "True" : "False";
  // Sign-extend to print negative values as such.
  int64_t value = width < 64 ? int64_t(bits << (64 - width)) >> (64 - width)
                             : int64_t(bits);
  return std::to_string(value);
}

absl::StatusOr<uint64_t> globalBits(std::string_view name,
                                    std::string_view type,
                                    const Argument &value) {
  unsigned width = widthOf(type);
  if (isFloatType(type)) {
    double real;
    if (value.kind() == ArgKind::Float)
      real = value.asFloat();
    else if (value.kind() == ArgKind::Int)
      real = double(value.asInt());
    else
      return absl::InvalidArgumentError(
          kjit::strCat("global '", name, "' has type ", type,
                       " and needs a number, not ", describeArgument(value)));
    if (type == "f64") {
      uint64_t bits;
      std::memcpy(&bits, &real, 8);
      return bits;
    }
    // Straight from the double: through float would round twice.
    if (type == "f16")
      return uint64_t(fp16FromDouble(real));
    if (type == "bf16")
      return uint64_t(bf16FromDouble(real));
    float narrow = float(real);
    uint32_t bits;
    std::memcpy(&bits, &narrow, 4);
    return uint64_t(bits);
  }
  if (value.kind() != ArgKind::Int && value.kind() != ArgKind::Bool)
    return absl::InvalidArgumentError(
        kjit::strCat("global '", name, "' has type ", type,
                     " and needs an integer, not ", describeArgument(value)));
  Int128 integer = value.asInt();
  Int128 limit = Int128(1) << width;
  // Signed or unsigned range of the width, as kjit.global's parser accepts.
  if (integer >= limit || integer < -(limit >> 1))
    return absl::OutOfRangeError(kjit::strCat("global '", name, "' of type ",
                                              type, " cannot hold ",
                                              describeArgument(value)));
  uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  return uint64_t(integer) & mask;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

absl::StatusOr<std::shared_ptr<Module>> Module::load(std::string path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(
        kjit::strCat("cannot read kernel IR file '", path, "'"));
  std::stringstream text;
  text << in.rdbuf();
  return fromText(text.str(), std::move(path));
}

absl::StatusOr<std::shared_ptr<Module>>
Module::fromText(std::string text, std::string sourceName) {
  absl::StatusOr<const kjit_compiler_api *> compiler = getCompiler();
  if (!compiler.ok())
    return compiler.status();
  char *json = nullptr, *error = nullptr;
  if ((*compiler)->analyze(text.data(), text.size(), sourceName.c_str(), &json,
                           &error) != 0) {
    std::string message = error ? error : "unknown error";
    (*compiler)->release(error);
    return absl::InvalidArgumentError(message);
  }
  std::string analysis = json;
  (*compiler)->release(json);

  auto impl = std::make_unique<Impl>();
  impl->text = std::move(text);
  impl->sourceName = std::move(sourceName);
  absl::StatusOr<JsonValue> parsed = parseJson(analysis);
  if (!parsed.ok())
    return absl::InternalError(
        kjit::strCat("the compiler's analysis is not JSON: ",
                     std::string(parsed.status().message())));
  auto field = [](const JsonValue &object,
                  std::string_view key) -> const JsonValue & {
    const JsonValue *value = object.find(key);
    static const JsonValue empty;
    return value ? *value : empty;
  };
  for (const JsonValue &global : field(*parsed, "globals").elements()) {
    GlobalSlot slot;
    slot.name = field(global, "name").text();
    slot.type = field(global, "type").text();
    std::string bits = field(global, "bits").text();
    slot.bits = std::strtoull(bits.c_str(), nullptr, 16);
    impl->globalIndex[slot.name] = impl->globals.size();
    impl->globals.push_back(std::move(slot));
  }
  std::shared_ptr<Module> module(new Module(std::move(impl)));
  for (const JsonValue &entry : field(*parsed, "kernels").elements()) {
    absl::StatusOr<KernelManifest> manifest =
        manifestFromJson(field(entry, "manifest").text());
    if (!manifest.ok())
      return manifest.status();
    std::vector<std::string> used;
    for (const JsonValue &name : field(entry, "globals").elements())
      used.push_back(name.text());
    absl::StatusOr<std::unique_ptr<Kernel>> kernel =
        makeKernel(module->impl_.get(), std::move(*manifest),
                   field(entry, "key").text(), std::move(used));
    if (!kernel.ok())
      return kernel.status();
    module->impl_->kernels.push_back(std::move(*kernel));
  }
  return module;
}

Module::Module(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;

absl::StatusOr<Kernel *> Module::kernel(std::string_view name) {
  for (auto &kernel : impl_->kernels)
    if (kernel->manifest().name == name)
      return kernel.get();
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

absl::Status Module::setGlobal(std::string_view name, const Argument &value) {
  std::lock_guard<std::mutex> lock(impl_->globalsMutex);
  auto it = impl_->globalIndex.find(std::string(name));
  if (it == impl_->globalIndex.end())
    return absl::NotFoundError(
        kjit::strCat("no global named '", name, "' in ", impl_->sourceName));
  GlobalSlot &slot = impl_->globals[it->second];
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
  auto it = impl_->globalIndex.find(std::string(name));
  if (it == impl_->globalIndex.end())
    return absl::NotFoundError(
        kjit::strCat("no global named '", name, "' in ", impl_->sourceName));
  const GlobalSlot &slot = impl_->globals[it->second];
  return formatGlobalValue(slot.type, slot.bits);
}

} // namespace kjit::rt
