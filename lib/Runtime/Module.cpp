//===- Module.cpp - kernel IR files and their globals ---------------------===//

#include "RuntimeImpl.h"

#include "kjit/Support/StrCat.h"

#include "kjit/Model/FloatFormats.h"
#include "kjit/Model/InputFile.h"

#include "absl/strings/str_cat.h"

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
    // (R13); an infinity asked for stays one.
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

absl::StatusOr<std::shared_ptr<Module>>
Module::fromText(Runtime &runtime, std::string text, std::string sourceName) {
  absl::StatusOr<CompilerService *> compiler = runtime.compiler();
  if (!compiler.ok())
    return compiler.status();
  absl::StatusOr<ModuleAnalysis> analysis =
      (*compiler)->analyze(text, sourceName);
  if (!analysis.ok())
    return analysis.status();

  auto impl = std::make_unique<Impl>();
  impl->runtime = &runtime;
  impl->bytecode = std::move(analysis->bytecode);
  impl->sourceName = std::move(sourceName);
  for (GlobalInfo &global : analysis->globals) {
    impl->globalIndex[global.name] = impl->globals.size();
    impl->globals.push_back({std::move(global.name), global.type, global.bits});
  }
  std::shared_ptr<Module> module(new Module(std::move(impl)));
  for (KernelAnalysis &entry : analysis->kernels) {
    absl::StatusOr<std::unique_ptr<Kernel>> kernel = makeKernel(
        module->impl_.get(), std::move(entry.manifest),
        std::move(entry.dependencyKey), std::move(entry.usedGlobals));
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
