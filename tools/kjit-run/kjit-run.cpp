//===- kjit-run.cpp - launch a kernel from the command line ---------------===//
//
// Loads a kernel IR file, builds its arguments from the command line, launches
// it through the kjit runtime and reports the outputs, the time per launch,
// compiles and cache hits. It links the runtime core only: LLVM is loaded
// (with the compiler library) when something must be compiled.
//
//===----------------------------------------------------------------------===//

#include "ArgSpec.h"
#include "Autotune.h"
#include "Buffer.h"
#include "CommandLine.h"
#include "DeviceMemory.h"
#include "Npy.h"
#include "WriteFile.h"

#include "kjit/Model/InputFile.h"
#include "kjit/Runtime/Autotuner.h"
#include "kjit/Runtime/Runtime.h"
#include "kjit/Support/StrCat.h"

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

struct Options {
  std::string file, kernel;
  rt::Grid grid = {1, 1, 1};
  std::vector<run::NamedArg> args;
  std::vector<std::pair<std::string, rt::Argument>> launchOptions;
  std::vector<run::NamedGlobal> globals, changeGlobals;
  rt::GlobalChangePolicy policy = rt::GlobalChangePolicy::Error;
  int repeat = 1;
  bool warmup = false;
  std::string recordOut, preload, outputDir, autotune;
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

constexpr const char *kDescription =
    "kjit-run: launch a kernel of a kjit IR file through the kjit runtime\n"
    "and report its outputs, the time per launch, compiles and cache hits\n"
    "(docs/KjitRun.md)\n";

constexpr const char *kEnvironment =
    R"(Environment:
  KJIT_DEBUG=1             device asserts on
  KJIT_INTERPRET=1         every launch on the host backend
  KJIT_DEFAULT_FP_FUSION   enable_fp_fusion's default: on unless set to
                           other than 1
  KJIT_PLUGINS             kjit plugins to load, as --load-plugin does
  KJIT_COMPILER_LIBRARY    the compiler library to open on a miss
  KJIT_LOG=recompiles      say why a kernel compiles again
  KJIT_CACHE_DIR           the disk cache (empty: off)
  KJIT_CACHE_MAX_SIZE      the disk cache's size limit
  KJIT_LAUNCH_TIMEOUT      seconds a host launch may run

Exit status: 0 done, 1 an error (the message says which).)";

/// --grid's value: 1 to 3 counts. Program ids are i32, as in Triton: an
/// extent past INT32_MAX would give programs negative ids.
std::optional<rt::Grid> parseGrid(const std::string &text) {
  rt::Grid grid = {1, 1, 1};
  std::stringstream stream(text);
  std::string part;
  int axis = 0;
  while (std::getline(stream, part, ',')) {
    int64_t value;
    if (axis == 3 || !cli::parseCount(part, 0, INT32_MAX, value))
      return std::nullopt;
    grid[axis++] = uint32_t(value);
  }
  if (axis == 0)
    return std::nullopt;
  return grid;
}

Options parseOptions(int argc, char **argv) {
  Options options;
  CLI::App app(kDescription, "kjit-run");
  app.footer(kEnvironment);
  app.get_formatter()->column_width(27);
  // A repeated single-valued option takes its last value; unknown options
  // and a second file are collected and reported below, in kjit's words.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.allow_extras();
  if (std::optional<std::string> empty = cli::emptyInlineValue(argc, argv))
    fail(*empty);

  std::string grid, policy;
  std::vector<std::string> args, launchOptions, globals, changeGlobals;
  app.add_option("FILE", options.file, "the kjit IR file (.mlir) to load")
      ->type_name("")
      ->required();
  app.add_option("--kernel", options.kernel, "the kernel to launch")
      ->type_name("NAME")
      ->required();
  app.add_option("--grid", grid,
                 "programs per grid dimension (default 1): 1 to 3\n"
                 "counts from 0 to 2147483647, as program ids are\n"
                 "i32 (64, 8,8); 0 launches no program")
      ->type_name("X[,Y[,Z]]")
      ->check(CLI::Validator(
          [](const std::string &text) -> std::string {
            if (parseGrid(text))
              return {};
            return "'" + text +
                   "' is not 1 to 3 counts from 0 to 2147483647 (program ids "
                   "are i32), as in --grid 64 or --grid 8,8 (0 launches no "
                   "program)";
          },
          ""));
  // Repeatable options take one value per occurrence: `--arg a b` leaves b
  // for the file.
  auto repeatable = [&](const char *name, std::vector<std::string> &values,
                        const char *type, const std::string &description) {
    app.add_option(name, values, description)
        ->type_name(type)
        ->allow_extra_args(false);
  };
  repeatable("--arg", args, "NAME=VALUE",
             "a kernel argument, by parameter name (repeatable):\n"
             "tensors  f32[4096]:random  fp16[64,128]:zeros\n"
             "         i32[10]:arange  f32[8]:ones  u8[16]:fill(3)\n"
             "         f32[4096]:random(seed=7)  f32:npy(file.npy)\n"
             "         (append :const for a read-only tensor)\n"
             "scalars  42  -1  0x10  1.5  1e-5  true  none\n"
             "         dtype:fp16");
  repeatable("--option", launchOptions, "NAME=VALUE",
             "a launch option (num_warps, num_stages, debug, ...;\n"
             "repeatable)");
  repeatable("--global", globals, "NAME=VALUE",
             "set a module global before the first launch; a\n"
             "global of a nested module is MODULE::NAME\n"
             "(repeatable)");
  repeatable("--change-global", changeGlobals, "NAME=VALUE",
             "after the launches, set a global and launch once\n"
             "more (shows the changed-global check; repeatable)");
  app.add_option("--on-global-change", policy,
                 "what a changed global does: an error (the\n"
                 "default), or a compile for the new value")
      ->type_name("error|recompile")
      ->check(CLI::Validator(
          [](const std::string &text) -> std::string {
            if (text == "error" || text == "recompile")
              return {};
            return "'" + text + "' is not 'error' or 'recompile'";
          },
          ""));
  app.add_option("--repeat", options.repeat,
                 "launch N times (default 1) and report the time\n"
                 "per launch over the launches after the first")
      ->type_name("N")
      ->transform(cli::Count(1, INT_MAX));
  app.add_flag("--warmup", options.warmup,
               "compile without launching (tensors need no memory)");
  app.add_option("--record-out", options.recordOut,
                 "write the specialization record (JSON) of the\n"
                 "launch")
      ->type_name("FILE")
      ->check(cli::NonEmpty("file name"));
  app.add_option("--autotune", options.autotune,
                 "time the configurations of FILE ({\"configs\": [{\"C\":\n"
                 "1, \"num_warps\": 4}, ...], \"key\": [\"n\"]}) and\n"
                 "launch the fastest (docs/KjitRun.md)")
      ->type_name("FILE.json")
      ->check(cli::NonEmpty("file name"));
  app.add_option("--preload", options.preload,
                 "fill the cache from a record before launching")
      ->type_name("FILE");
  repeatable("--load-plugin", options.plugins, "LIB",
             "load a kjit plugin (repeatable; KJIT_PLUGINS also\n"
             "works)");
  repeatable("--load-pass-plugin", options.passPlugins, "LIB",
             "load an MLIR pass plugin (mlirGetPassPluginInfo,\n"
             "built against the libMLIR.so kjit's compiler\n"
             "links) into the compiler (repeatable); its passes\n"
             "can then run in --extra-passes");
  repeatable("--load-dialect-plugin", options.dialectPlugins, "LIB",
             "load an MLIR dialect plugin\n"
             "(mlirGetDialectPluginInfo) into the compiler\n"
             "(repeatable): kernels may use its ops");
  app.add_option("--extra-passes", options.extraPasses,
                 "passes every compile runs after specialization,\n"
                 "before the target's lowering, as inside\n"
                 "builtin.module(...): 'count-kernel-ops,cse'. The\n"
                 "plugins and these passes join the cache key")
      ->type_name("PIPELINE");
  repeatable("--print", options.printNames, "NAME",
             "print this tensor after the launches (repeatable;\n"
             "default: every tensor that is not :const)");
  app.add_option("--max-print", options.maxPrint,
                 "elements printed per tensor (default 8)")
      ->type_name("N")
      ->transform(cli::Count(0, INT64_MAX));
  app.add_option("--output-dir", options.outputDir,
                 "write every tensor as DIR/NAME.npy after the\n"
                 "launches, and DIR/NAME.in.npy before the first")
      ->type_name("DIR")
      ->check(cli::NonEmpty("directory"));
  app.add_option("--backend", options.backend,
                 "the target to launch on (default host): a loaded\n"
                 "plugin's backend, or libkjit-TARGET.so beside\n"
                 "libkjit-runtime.so; KJIT_INTERPRET=1 runs every\n"
                 "launch on the host backend")
      ->type_name("TARGET");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    if (error.get_exit_code() == int(CLI::ExitCodes::Success))
      std::exit(app.exit(error)); // --help
    fail(error.what());
  }
  for (const std::string &extra : app.remaining()) {
    if (extra.rfind('-', 0) == 0)
      fail("unknown option '" + extra.substr(0, extra.find('=')) +
           "' (see --help)");
    fail("one kernel IR file only; got '" + options.file + "' and '" + extra +
         "'");
  }

  // The values in kjit's own syntax (tools/kjit-run/ArgSpec.h).
  if (!grid.empty())
    options.grid = *parseGrid(grid);
  if (policy == "recompile")
    options.policy = rt::GlobalChangePolicy::Recompile;
  for (const std::string &value : args) {
    auto parsed = run::parseArgOption(value);
    if (!parsed.ok())
      fail(text(parsed.status()));
    options.args.push_back(std::move(*parsed));
  }
  for (const std::string &option : launchOptions) {
    size_t eq = option.find('=');
    if (eq == std::string::npos)
      fail("--option takes NAME=VALUE; got '" + option + "'");
    auto parsed = run::parseScalar("option '" + option.substr(0, eq) + "'",
                                   option.substr(eq + 1));
    if (!parsed.ok())
      fail(text(parsed.status()));
    options.launchOptions.emplace_back(option.substr(0, eq), *parsed);
  }
  for (auto *list : {&globals, &changeGlobals})
    for (const std::string &value : *list) {
      auto parsed = run::parseGlobalOption(value);
      if (!parsed.ok())
        fail(text(parsed.status()));
      (list == &globals ? options.globals : options.changeGlobals)
          .push_back(std::move(*parsed));
    }
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
  if (!options.autotune.empty() &&
      (options.warmup || !options.recordOut.empty() ||
       !options.preload.empty()))
    fail("--autotune times launches; it cannot be combined with --warmup, "
         "--record-out or --preload");
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
  // With --autotune the configurations supply values (constexprs) the
  // arguments leave out: checked with the first configuration's.
  std::optional<rt::AutotuneSpec> tuning;
  std::unique_ptr<rt::Autotuner> tuner;
  std::vector<rt::KeywordArgument> checked = keywords;
  if (!options.autotune.empty()) {
    absl::StatusOr<rt::AutotuneSpec> spec =
        run::readAutotuneFile(options.autotune);
    if (!spec.ok())
      fail(text(spec.status()));
    tuning = *std::move(spec);
    absl::StatusOr<std::unique_ptr<rt::Autotuner>> created =
        rt::Autotuner::create(*runtime, **kernel, *tuning);
    if (!created.ok())
      fail(text(created.status()));
    tuner = *std::move(created);
    for (const auto &[name, value] : tuner->configs().front().values)
      checked.push_back({name, value});
  }
  if (absl::Status valid = (*kernel)->checkArguments({}, checked); !valid.ok())
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
  if (tuner) {
    // Trials launch the kernel: accumulating outputs show them
    // (docs/KjitRun.md, "--autotune").
    absl::StatusOr<rt::TuningOutcome> outcome =
        tuner->tune(config, {}, keywords);
    if (!outcome.ok())
      fail(text(outcome.status()));
    std::printf("%s\n", run::describeOutcome(*tuning, *outcome).c_str());
  }
  auto launch = [&]() {
    auto result = tuner ? tuner->launch(config, {}, keywords)
                        : (*kernel)->launch(config, {}, keywords);
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
