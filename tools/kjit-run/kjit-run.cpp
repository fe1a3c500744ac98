//===- kjit-run.cpp - launch a kernel from the command line ---------------===//
//
// Loads a kernel IR file, builds its arguments from the command line, launches
// it through the kjit runtime and reports the outputs, the time per launch,
// compiles and cache hits. It links the runtime core only: LLVM is loaded
// (with the compiler library) when something must be compiled.
//
//===----------------------------------------------------------------------===//

#include "ArgSpec.h"
#include "Buffer.h"
#include "DeviceMemory.h"
#include "Npy.h"
#include "WriteFile.h"

#include "kjit/Model/InputFile.h"
#include "kjit/Runtime/Runtime.h"
#include "kjit/Support/StrCat.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace kjit;

namespace {

constexpr const char *kUsage =
    R"(OVERVIEW: kjit-run: launch a kernel of a kjit IR file

USAGE: kjit-run FILE --kernel NAME [options]

OPTIONS:
  --kernel NAME            the kernel to launch
  --grid X[,Y[,Z]]         programs per grid dimension (default 1)
  --arg NAME=VALUE         a kernel argument, by parameter name (repeatable):
                             tensors  f32[4096]:random  fp16[64,128]:zeros
                                      i32[10]:arange  f32[8]:ones  u8[16]:fill(3)
                                      f32[4096]:random(seed=7)  f32:npy(file.npy)
                                      (append :const for a read-only tensor)
                             scalars  42  -1  0x10  1.5  1e-5  true  none  dtype:fp16
  --option NAME=VALUE      a launch option (num_warps, num_stages, debug, ...)
  --global NAME=VALUE      set a module global before the first launch; a
                           global of a nested module is MODULE::NAME
  --change-global NAME=VALUE
                           after the launches, set a global and launch once more
                           (shows the changed-global check)
  --on-global-change error|recompile
                           what a changed global does (default: error)
  --repeat N               launch N times (default 1) and report the time
  --warmup                 compile without launching (tensors need no memory)
  --record-out FILE        write the specialization record (JSON) of the launch
  --preload FILE           fill the cache from a record before launching
  --load-plugin LIB        load a kjit plugin (repeatable; KJIT_PLUGINS also works)
  --load-pass-plugin LIB   load an MLIR pass plugin (mlirGetPassPluginInfo, built
                           against the libMLIR.so kjit's compiler links) into the
                           compiler (repeatable); its passes can then run in
                           --extra-passes
  --load-dialect-plugin LIB
                           load an MLIR dialect plugin (mlirGetDialectPluginInfo)
                           into the compiler (repeatable): kernels may use its ops
  --extra-passes PIPELINE  passes every compile runs after specialization, before
                           the target's lowering, as inside builtin.module(...):
                           'count-kernel-ops,cse'. The plugins and these passes
                           join the cache key
  --print NAME             print this tensor after the launches (repeatable;
                           default: every tensor that is not :const)
  --max-print N            elements printed per tensor (default 8)
  --output-dir DIR         write every tensor as DIR/NAME.npy after the launches,
                           and DIR/NAME.in.npy before the first one
  --backend TARGET         the target to launch on (default host): a loaded
                           plugin's backend, or libkjit-TARGET.so beside
                           libkjit-runtime.so; KJIT_INTERPRET=1 runs every
                           launch on the host backend
  --help                   this text

ENVIRONMENT: KJIT_DEBUG=1 (device asserts), KJIT_INTERPRET=1 (host backend),
KJIT_DEFAULT_FP_FUSION (enable_fp_fusion's default: on unless set to other
than 1), KJIT_PLUGINS, KJIT_COMPILER_LIBRARY, KJIT_LOG=recompiles (say why
a kernel compiles again), KJIT_CACHE_DIR (the disk cache; empty: off),
KJIT_CACHE_MAX_SIZE, KJIT_LAUNCH_TIMEOUT (seconds a host launch may run).
)";

struct Options {
  std::string file, kernel;
  rt::Grid grid = {1, 1, 1};
  std::vector<run::NamedArg> args;
  std::vector<std::pair<std::string, rt::Argument>> launchOptions;
  std::vector<run::NamedGlobal> globals, changeGlobals;
  rt::GlobalChangePolicy policy = rt::GlobalChangePolicy::Error;
  int repeat = 1;
  bool warmup = false;
  std::string recordOut, preload, outputDir;
  std::vector<std::string> plugins, printNames;
  std::vector<std::string> passPlugins, dialectPlugins;
  std::string extraPasses;
  std::string backend;
  size_t maxPrint = 8;
};

/// The runtime, for fail(): plugins finish their work (trace files,
/// summaries) even when the run fails.
rt::Runtime *runtime = nullptr;

[[noreturn]] void fail(const std::string &message) {
  // The last line of defence for bytes from files and plugins: the whole
  // message is written (a NUL does not end it) with control bytes escaped;
  // newlines stay, for multi-line compiler diagnostics.
  std::string line = "kjit-run: error: " +
                     kjit::escapeControl(message, /*keepNewlines=*/true) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  if (runtime)
    runtime->plugins().shutdown();
  std::exit(1);
}

std::string text(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

/// A decimal count in [min, max]; anything else (signs, spaces, a value
/// past max or past what a long holds) is refused, never wrapped.
bool parseCount(const std::string &text, long min, long max, long &out) {
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) ||
      *end || errno == ERANGE || value < min || value > max)
    return false;
  out = value;
  return true;
}

rt::Grid parseGrid(const std::string &text) {
  rt::Grid grid = {1, 1, 1};
  std::stringstream stream(text);
  std::string part;
  int axis = 0;
  while (std::getline(stream, part, ',')) {
    long value;
    // Program ids are i32, as in Triton: an extent past INT32_MAX would
    // give programs negative ids.
    if (axis == 3 || !parseCount(part, 0, INT32_MAX, value))
      fail("--grid takes 1 to 3 counts from 0 to 2147483647 (program ids are "
           "i32), as in --grid 64 or --grid 8,8 (0 launches no program); "
           "got '" +
           text + "'");
    grid[axis++] = uint32_t(value);
  }
  if (axis == 0)
    fail("--grid takes 1 to 3 counts; got '" + text + "'");
  return grid;
}

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.file.empty())
        fail("one kernel IR file only; got '" + options.file + "' and '" + arg +
             "'");
      options.file = arg;
      continue;
    }
    // --name=value or --name value.
    std::string name = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    auto takeValue = [&]() {
      if (inlineValue)
        return value;
      if (i + 1 >= argc)
        fail(name + " needs a value");
      return std::string(argv[++i]);
    };
    if (name == "--warmup") {
      options.warmup = true;
    } else if (name == "--kernel") {
      options.kernel = takeValue();
    } else if (name == "--grid") {
      options.grid = parseGrid(takeValue());
    } else if (name == "--arg") {
      auto parsed = run::parseArgOption(takeValue());
      if (!parsed.ok())
        fail(text(parsed.status()));
      options.args.push_back(std::move(*parsed));
    } else if (name == "--option") {
      std::string option = takeValue();
      size_t eq = option.find('=');
      if (eq == std::string::npos)
        fail("--option takes NAME=VALUE; got '" + option + "'");
      auto parsed = run::parseScalar("option '" + option.substr(0, eq) + "'",
                                     option.substr(eq + 1));
      if (!parsed.ok())
        fail(text(parsed.status()));
      options.launchOptions.emplace_back(option.substr(0, eq), *parsed);
    } else if (name == "--global" || name == "--change-global") {
      auto parsed = run::parseGlobalOption(takeValue());
      if (!parsed.ok())
        fail(text(parsed.status()));
      (name == "--global" ? options.globals : options.changeGlobals)
          .push_back(std::move(*parsed));
    } else if (name == "--on-global-change") {
      std::string policy = takeValue();
      if (policy == "error")
        options.policy = rt::GlobalChangePolicy::Error;
      else if (policy == "recompile")
        options.policy = rt::GlobalChangePolicy::Recompile;
      else
        fail("--on-global-change takes 'error' or 'recompile', not '" + policy +
             "'");
    } else if (name == "--repeat") {
      long count;
      std::string value = takeValue();
      if (!parseCount(value, 1, INT_MAX, count))
        fail("--repeat takes a count from 1 to 2147483647, not '" + value +
             "'");
      options.repeat = int(count);
    } else if (name == "--max-print") {
      long count;
      std::string value = takeValue();
      if (!parseCount(value, 0, LONG_MAX, count))
        fail("--max-print takes a count from 0 to " + std::to_string(LONG_MAX) +
             ", not '" + value + "'");
      options.maxPrint = size_t(count);
    } else if (name == "--record-out") {
      options.recordOut = takeValue();
      if (options.recordOut.empty())
        fail("--record-out takes a file name, not ''");
    } else if (name == "--preload") {
      options.preload = takeValue();
    } else if (name == "--output-dir") {
      options.outputDir = takeValue();
      if (options.outputDir.empty())
        fail("--output-dir takes a directory, not ''");
    } else if (name == "--load-plugin") {
      options.plugins.push_back(takeValue());
    } else if (name == "--load-pass-plugin") {
      options.passPlugins.push_back(takeValue());
    } else if (name == "--load-dialect-plugin") {
      options.dialectPlugins.push_back(takeValue());
    } else if (name == "--extra-passes") {
      options.extraPasses = takeValue();
    } else if (name == "--print") {
      options.printNames.push_back(takeValue());
    } else if (name == "--backend") {
      options.backend = takeValue();
    } else {
      fail("unknown option '" + name + "' (see --help)");
    }
  }
  if (options.file.empty())
    fail("no kernel IR file given (see --help)");
  if (options.kernel.empty())
    fail("no kernel given: add --kernel NAME");
  // Before anything is compiled or launched.
  for (const std::string &name : options.printNames) {
    bool tensor = false;
    for (const run::NamedArg &arg : options.args)
      tensor |= arg.name == name && arg.value.isTensor();
    if (!tensor)
      fail("--print " + name + ": no tensor argument has that name");
  }
  return options;
}

std::string readRecord(const std::string &path) {
  absl::StatusOr<std::string> contents =
      rt::readInputFile(path, rt::kMaxRecordFileBytes, "specialization record");
  if (!contents.ok())
    fail(text(contents.status()));
  return *std::move(contents);
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  // The runtime reads the environment (KJIT_PLUGINS, KJIT_INTERPRET,
  // KJIT_DEBUG) and loads the plugins; the options add to it.
  rt::RuntimeOptions setup;
  setup.plugins = options.plugins;
  setup.target = options.backend;
  setup.mlirPassPlugins = options.passPlugins;
  setup.mlirDialectPlugins = options.dialectPlugins;
  setup.extraPasses = options.extraPasses;
  auto created = rt::Runtime::create(std::move(setup));
  if (!created.ok())
    fail(text(created.status()));
  std::unique_ptr<rt::Runtime> owner = std::move(*created);
  runtime = owner.get();
  // A target without a backend fails here, before anything is compiled.
  auto backend = runtime->backend();
  if (!backend.ok())
    fail(text(backend.status()));

  auto module = rt::Module::load(*runtime, options.file);
  if (!module.ok())
    fail(text(module.status()));
  auto kernel = (*module)->kernel(options.kernel);
  if (!kernel.ok())
    fail(text(kernel.status()));
  (*kernel)->setGlobalChangePolicy(options.policy);
  for (const run::NamedGlobal &global : options.globals)
    if (absl::Status status = (*module)->setGlobal(global.name, global.value);
        !status.ok())
      fail(text(status));

  // The record first, as before any launch: it needs no arguments, and a
  // record that cannot be used is reported before they are looked at.
  if (!options.preload.empty())
    if (absl::Status status = (*kernel)->preload(readRecord(options.preload));
        !status.ok())
      fail("--preload " + options.preload + ": " + text(status));

  // Arguments: parameters in the order given, by keyword.
  // Host buffers, mirrored on the device when the backend has device memory
  // (declared before `device` so that the mirror goes first).
  std::map<std::string, run::HostBuffer> buffers;
  std::optional<run::DeviceMirror> device;
  if ((*backend)->ref.hasDeviceMemory())
    device.emplace((*backend)->ref, /*device=*/0);
  std::map<std::string, bool> readOnly;
  std::vector<rt::KeywordArgument> keywords;
  std::vector<std::string> names; // keywords point into these
  names.reserve(options.args.size() + options.launchOptions.size());
  // First with mock tensors (dtype only), checked as a launch binds them
  // before any buffer is made: a large buffer takes seconds to fill, and a
  // mistake in another argument should not wait for it.
  for (run::NamedArg &arg : options.args) {
    names.push_back(arg.name);
    keywords.push_back({names.back(), arg.value.isTensor()
                                          ? rt::Argument::mockTensor(
                                                arg.value.tensor->dtype,
                                                arg.value.tensor->readOnly)
                                          : arg.value.scalar});
  }
  for (auto &[name, value] : options.launchOptions) {
    names.push_back(name);
    keywords.push_back({names.back(), value});
  }
  if (absl::Status valid = (*kernel)->checkArguments({}, keywords); !valid.ok())
    fail(text(valid));
  for (size_t i = 0; i < options.args.size() && !options.warmup; ++i) {
    const run::NamedArg &arg = options.args[i];
    if (!arg.value.isTensor())
      continue;
    const run::TensorSpec &spec = *arg.value.tensor;
    auto buffer = run::buildTensor(arg.name, spec);
    if (!buffer.ok())
      fail(text(buffer.status()));
    run::HostBuffer &host =
        buffers.emplace(arg.name, std::move(*buffer)).first->second;
    rt::Argument tensor = host.toArgument(spec.readOnly);
    if (device) {
      absl::StatusOr<uint64_t> address = device->mirror(host);
      if (!address.ok())
        fail("--arg " + arg.name + ": " + text(address.status()));
      tensor = rt::Argument::tensor(*address, spec.dtype, spec.readOnly);
    }
    keywords[i].value = tensor;
    readOnly[arg.name] = spec.readOnly;
  }

  auto writeRecord = [&](const rt::SpecializationRecord &record) {
    if (options.recordOut.empty())
      return;
    if (absl::Status written =
            run::writeFile(options.recordOut, rt::toJson(record) + "\n");
        !written.ok())
      fail("--record-out '" + options.recordOut + "': " + text(written));
  };

  if (options.warmup) {
    auto record = (*kernel)->warmup({}, keywords);
    if (!record.ok())
      fail(text(record.status()));
    writeRecord(*record);
    std::printf("warmup: %s\ncompiles: %llu\n", rt::repr(*record).c_str(),
                (unsigned long long)(*kernel)->stats().compiles);
    std::printf("disk hits: %llu; compiler library: %s\n",
                (unsigned long long)(*kernel)->stats().diskHits,
                runtime->compilerLoaded() ? "loaded" : "not loaded");
    return 0;
  }
  if (!options.recordOut.empty()) {
    // The record of this launch's specialization, made by warmup on the
    // same arguments (a cache hit when the launch compiles it anyway).
    auto record = (*kernel)->warmup({}, keywords);
    if (!record.ok())
      fail(text(record.status()));
    writeRecord(*record);
  }

  if (!options.outputDir.empty())
    for (auto &[name, buffer] : buffers)
      if (absl::Status status =
              run::writeNpy(options.outputDir + "/" + name + ".in.npy", buffer);
          !status.ok())
        fail(text(status));

  // Compiles by --preload and --record-out's warmup, before any launch.
  uint64_t compiledBefore = (*kernel)->stats().compiles;
  rt::LaunchConfig config;
  config.grid = options.grid;
  unsigned compiles = 0, hits = 0;
  bool skipped = false;
  // Where the first launch's kernel came from (docs/DiskCache.md).
  const char *firstLaunch = nullptr;
  auto launch = [&]() {
    auto result = (*kernel)->launch(config, {}, keywords);
    if (!result.ok())
      fail(text(result.status()));
    if (!firstLaunch)
      firstLaunch = !result->launched   ? "skipped by a cache hook"
                    : result->compiled  ? "compiled"
                    : result->diskHit   ? "disk hit"
                    : result->remoteHit ? "remote hit"
                                        : "memory hit";
    skipped |= !result->launched;
    (result->compiled ? compiles : hits) += result->launched ? 1 : 0;
  };
  // Errors a backend reports later, from its own threads (plugin ABI
  // report_async_error): one that arrives from here on belongs to these
  // launches.
  const uint64_t asyncErrorsBefore = runtime->plugins().asyncErrorCount();
  auto failOnAsyncErrors = [&](const char *when) {
    uint64_t errors = runtime->plugins().asyncErrorCount() - asyncErrorsBefore;
    if (errors)
      fail(kjit::strCat(errors, " asynchronous kernel error",
                        errors == 1 ? " was" : "s were", " reported (above) ",
                        when, "; the outputs are undefined"));
  };
  // The first launch may compile; the time per launch is measured over the
  // launches after it when there are several.
  launch();
  auto start = std::chrono::steady_clock::now();
  for (int i = 1; i < options.repeat; ++i)
    launch();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for (const run::NamedGlobal &global : options.changeGlobals) {
    if (absl::Status status = (*module)->setGlobal(global.name, global.value);
        !status.ok())
      fail(text(status));
    launch();
  }

  // The outputs are read once the launches are done: an asynchronous
  // backend has only enqueued them. Its device memory is synchronized by
  // copyBack; a backend that reads host memory is synchronized here.
  if (device) {
    if (absl::Status back = device->copyBack(); !back.ok())
      fail(text(back));
  } else if (absl::Status done =
                 (*backend)->ref.synchronize(/*device=*/0, config.stream);
             !done.ok()) {
    fail(text(done));
  }
  failOnAsyncErrors("during the launches");
  if (skipped)
    std::printf("a cache hook skipped the compile: nothing was launched\n");
  std::vector<std::string> shown = options.printNames;
  if (shown.empty())
    for (auto &[name, buffer] : buffers)
      if (!readOnly[name])
        shown.push_back(name);
  for (const std::string &name : shown) {
    // A tensor argument (parseOptions checked --print's names).
    const run::HostBuffer &buffer = buffers.at(name);
    std::printf("%s = %s\n%s checksum: %s\n", name.c_str(),
                run::formatBuffer(buffer, options.maxPrint).c_str(),
                name.c_str(), run::formatChecksum(buffer).c_str());
  }
  if (!options.outputDir.empty())
    for (auto &[name, buffer] : buffers)
      if (absl::Status status =
              run::writeNpy(options.outputDir + "/" + name + ".npy", buffer);
          !status.ok())
        fail(text(status));
  if (compiledBefore)
    std::printf("compiled before the launches (preload, record): %llu\n",
                (unsigned long long)compiledBefore);
  std::printf("launches: %u, compiles: %u, cache hits: %u\n", compiles + hits,
              compiles, hits);
  // docs/DiskCache.md: a warm process neither compiles nor loads LLVM.
  std::printf("first launch: %s; compiler library: %s\n",
              firstLaunch ? firstLaunch : "none",
              runtime->compilerLoaded() ? "loaded" : "not loaded");
  if (options.repeat > 1)
    std::printf("time per launch: %.3f us (%d launches after the first)\n",
                seconds * 1e6 / (options.repeat - 1), options.repeat - 1);
  // A backend may still report until its fini has returned (its threads
  // drain there): shut down now, and the exit status says what came.
  std::fflush(stdout);
  device.reset();
  runtime->shutdown();
  failOnAsyncErrors("after the outputs were printed");
  return 0;
}
