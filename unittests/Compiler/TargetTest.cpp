//===- TargetTest.cpp - the target registry -------------------------------===//
//
// The built-in host target, registering another target, and the compiler
// module's answers to a target nobody registered and to another build.
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/Target.h"
#include "kjit/Runtime/CompilerService.h"
#include "kjit/Target/Cuda/CudaTarget.h"

#include "kjit/Model/Specialization.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace {

/// A target that lowers nothing; only its name matters here.
class FakeTarget final : public kjit::Target {
public:
  explicit FakeTarget(std::string name) : name_(std::move(name)) {}
  llvm::StringRef name() const override { return name_; }
  llvm::StringRef artifactFormat() const override { return "fake"; }
  void buildPipeline(mlir::OpPassManager &,
                     const kjit::TargetOptions &) const override {}
  llvm::Expected<kjit::TargetArtifact>
  emitArtifact(mlir::ModuleOp, const kjit::TargetOptions &) const override {
    return llvm::createStringError("fake targets emit nothing");
  }

private:
  std::string name_;
};

TEST(TargetTest, HostIsBuiltIn) {
  const kjit::Target *host = kjit::lookupTarget("host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->name(), "host");
  EXPECT_EQ(host->artifactFormat(), "elf-shared-object");
  std::vector<std::string> names = kjit::getRegisteredTargetNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "host"), names.end());
}

TEST(TargetTest, CudaIsBuiltIn) {
  const kjit::Target *cuda = kjit::lookupTarget("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->artifactFormat(), "ptx");
  kjit::TargetOptions options;
  llvm::Expected<kjit::CudaConfig> config = kjit::resolveCudaConfig(options);
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  // The default chip, sm_90, compiles for sm_90a (wgmma) at PTX 8.0; an
  // older PTX keeps sm_90.
  EXPECT_EQ(config->chip, "sm_90a");
  EXPECT_EQ(config->ptx, 80);
  EXPECT_EQ(config->libdevice, "");
  options.ptxVersion = 78;
  llvm::Expected<kjit::CudaConfig> older = kjit::resolveCudaConfig(options);
  ASSERT_TRUE(static_cast<bool>(older)) << llvm::toString(older.takeError());
  EXPECT_EQ(older->chip, "sm_90");
  options.ptxVersion = 0;
  // The table: sorted by name, every minimum is a version LLVM emits.
  llvm::ArrayRef<kjit::CudaChip> chips = kjit::getCudaChips();
  for (size_t i = 0; i < chips.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(llvm::StringRef(chips[i - 1].name), chips[i].name);
    }
    EXPECT_TRUE(llvm::is_contained(kjit::getCudaPtxVersions(), chips[i].minPtx))
        << chips[i].name;
  }
}

/// The message of the error `options` give the cuda target, or "" if none.
std::string cudaError(const kjit::TargetOptions &options) {
  llvm::Error error = kjit::lookupTarget("cuda")->validateOptions(options);
  return error ? llvm::toString(std::move(error)) : std::string();
}

TEST(TargetTest, CudaRefusesBadOptions) {
  kjit::TargetOptions options;
  options.backendOptions = {{"ptx", "80"}, {"opt-level", "3"}};
  EXPECT_EQ(cudaError(options),
            "target 'cuda' takes no option 'opt-level' (it takes ptx and "
            "libdevice)");
  options.backendOptions = {{"ptx", "80"}, {"ptx", "81"}};
  EXPECT_EQ(cudaError(options), "option 'ptx' is given twice");
  options.backendOptions = {{"ptx", "8.1"}};
  EXPECT_EQ(cudaError(options), "");
  options.arch = "sm_75";
  options.backendOptions = {{"ptx", "62"}};
  EXPECT_EQ(cudaError(options),
            "option 'ptx' 62 (PTX ISA 6.2) does not support sm_75, which needs "
            "PTX 63 (ISA 6.3) or newer");
  options.arch = "sm_90";
  options.backendOptions = {{"libdevice", ""}};
  EXPECT_EQ(cudaError(options),
            "option 'libdevice' needs a path (libdevice.10.bc)");
  options.backendOptions = {{"libdevice", "/nonexistent/libdevice.10.bc"}};
  EXPECT_EQ(cudaError(options), "libdevice '/nonexistent/libdevice.10.bc' "
                                "cannot be read: No such file or directory");
  options.backendOptions = {};
  options.ptxVersion = 1000;
  EXPECT_NE(cudaError(options).find("launch option 'ptx_version' 1000 is not "
                                    "a PTX version LLVM 22 can emit"),
            std::string::npos);
}

TEST(TargetTest, RegisterOnceByName) {
  EXPECT_TRUE(kjit::registerTarget(std::make_unique<FakeTarget>("aaa-fake")));
  EXPECT_FALSE(kjit::registerTarget(std::make_unique<FakeTarget>("aaa-fake")));
  EXPECT_FALSE(kjit::registerTarget(std::make_unique<FakeTarget>("host")));
  const kjit::Target *fake = kjit::lookupTarget("aaa-fake");
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(fake->artifactFormat(), "fake");
  // Sorted, for error messages.
  std::vector<std::string> names = kjit::getRegisteredTargetNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.front(), "aaa-fake");
}

/// The factory of the compiler module the runtime opens.
kjit_compiler_create_service_fn factory() {
  void *handle = dlopen(KJIT_COMPILER_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return nullptr;
  return reinterpret_cast<kjit_compiler_create_service_fn>(
      dlsym(handle, kCompilerServiceEntry));
}

/// A compiler service of the module, as the runtime makes one.
absl::StatusOr<std::unique_ptr<kjit::rt::CompilerService>> makeService() {
  kjit_compiler_create_service_fn create = factory();
  if (!create)
    return absl::InternalError(dlerror());
  const char *error = nullptr;
  std::unique_ptr<kjit::rt::CompilerService> service(
      create(kjit::rt::kCompilerServiceVersion, &error));
  if (!service)
    return absl::InternalError(error ? error : "no service");
  return service;
}

TEST(TargetTest, CompileNamesTheRegisteredTargets) {
  absl::StatusOr<std::unique_ptr<kjit::rt::CompilerService>> made =
      makeService();
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<kjit::rt::CompilerService> service = std::move(*made);
  // The module shares this process's registry (both link libkjit-mlir), so
  // a target another test registered is listed too when the tests run in
  // one process rather than one per test as under lit.
  std::string registered;
  for (const std::string &name : kjit::getRegisteredTargetNames())
    registered += (registered.empty() ? "" : ", ") + name;
  EXPECT_NE(registered.find("cuda, host"), std::string::npos) << registered;
  bool cuda = false;
  for (const auto &target : service->targets())
    if (target.name == "cuda") {
      cuda = true;
      EXPECT_EQ(target.artifactFormat, "ptx");
    }
  EXPECT_TRUE(cuda);
  kjit::rt::SpecializationRecord record;
  record.name = "k";
  kjit::rt::CompileRequest request;
  request.record = &record;
  request.target = "tpu";
  absl::StatusOr<kjit::rt::CompiledArtifact> result = service->compile(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(),
            "unknown target 'tpu' (registered: " + registered + ")");

  std::vector<std::string> formats = {"ptx"};
  request.target = "host";
  request.acceptedFormats = formats;
  result = service->compile(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "target 'host' produces 'elf-shared-object', which the backend "
            "does not accept (it accepts: ptx)");
}

/// A kernel that needs libdevice (math.exp), and a record of its launch.
constexpr const char *kExpKernel = R"(
kjit.kernel @k(%x: !kjit.ptr<f32>, %n: i32) {
  %pid = kjit.program_id x
  %v = arith.sitofp %n : i32 to f32
  %e = math.exp %v : f32
  kjit.store %e, %x[%pid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
)";
constexpr const char *kExpRecord =
    R"({"version":1,"name":"k","params":["x","n"],"signature":{"x":"*fp32",)"
    R"("n":"i32"},"spec":{"x":"D","n":"N"},"constants":{},"attrs":)"
    R"({"divisibility_16":["x"],"equal_to_1":[]},"options":{"num_warps":4,)"
    R"("num_ctas":1,"num_stages":3,"maxnreg":null,"ptx_version":null,)"
    R"("enable_fp_fusion":true,"enable_reflect_ftz":true,)"
    R"("launch_cooperative_grid":false,"launch_pdl":false,"debug":false,)"
    R"("sanitize_overflow":false},"key":"x:*fp32:D,n:i32:N|debug=false,)"
    R"(enable_fp_fusion=true,enable_reflect_ftz=true,)"
    R"(launch_cooperative_grid=false,launch_pdl=false,maxnreg=none,)"
    R"(num_ctas=1,num_stages=3,num_warps=4,ptx_version=none,)"
    R"(sanitize_overflow=false"})";

/// The cuda target through the compiler service, as the runtime calls it
/// for a backend that describes `arch` and `options`.
TEST(TargetTest, CudaCompilesThroughTheService) {
  absl::StatusOr<std::unique_ptr<kjit::rt::CompilerService>> made =
      makeService();
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<kjit::rt::CompilerService> service = std::move(*made);
  absl::StatusOr<kjit::rt::ModuleAnalysis> analysis =
      service->analyze(kExpKernel, "exp.mlir");
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<kjit::rt::SpecializationRecord> record =
      kjit::rt::specializationFromJson(kExpRecord);
  ASSERT_TRUE(record.ok()) << record.status();
  std::vector<std::string> formats = {"ptx"};
  kjit::rt::CompileRequest request;
  request.bytecode = analysis->bytecode;
  request.sourceName = "exp.mlir";
  request.record = &*record;
  request.target = "cuda";
  request.acceptedFormats = formats;

  auto compile = [&](std::string_view arch,
                     std::vector<std::pair<std::string, std::string>> options) {
    request.arch = arch;
    request.backendOptions = options;
    return service->compile(request);
  };
  absl::StatusOr<kjit::rt::CompiledArtifact> result = compile("sm_91", {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(std::string(result.status().message())
                  .rfind("the backend's options do not fit target "
                         "'cuda': unknown CUDA architecture 'sm_91'; "
                         "LLVM 22's NVPTX knows sm_100",
                         0) == 0)
      << result.status().message();
  result = compile("sm_90", {{"ptx", "77"}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "the backend's options do not fit target 'cuda': option 'ptx' 77 "
            "(PTX ISA 7.7) does not support sm_90, which needs PTX 78 (ISA "
            "7.8) or newer");
  result = compile("sm_90", {{"fast-math", "1"}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "the backend's options do not fit target 'cuda': target 'cuda' "
            "takes no option 'fast-math' (it takes ptx and libdevice)");
  result = compile("sm_90", {{"libdevice", "/nonexistent.bc"}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "the backend's options do not fit target 'cuda': libdevice "
            "'/nonexistent.bc' cannot be read: No such file or directory");
  // No libdevice: a user error naming the function and the operation.
  result = compile("sm_90", {{"ptx", "80"}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(
                "exp.mlir:5:8: error: kernel 'k' needs libdevice, which the "
                "backend did not give: it calls '__nv_expf'"),
            std::string::npos)
      << result.status().message();
  // With libdevice (where the machine has it), PTX.
  const char *libdevice = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  if (!llvm::sys::fs::exists(libdevice))
    GTEST_SKIP() << "no libdevice at " << libdevice;
  result = compile("sm_90", {{"ptx", "80"}, {"libdevice", libdevice}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->format, "ptx");
  EXPECT_NE(result->bytes.find(".visible .entry k("), std::string::npos);
  EXPECT_EQ(result->bytes.find("__nv_"), std::string::npos);
  EXPECT_EQ(result->metadataJson,
            R"({"target":"cuda","format":"ptx","arch":"sm_90a",)"
            R"("ptx_version":80,"kernel":"k","num_warps":4,"shared_bytes":0,)"
            R"("libdevice":true})");
}

/// The exp kernel without the exp: nothing for libdevice to define.
constexpr const char *kStoreKernel = R"(
kjit.kernel @k(%x: !kjit.ptr<f32>, %n: i32) {
  %pid = kjit.program_id x
  %v = arith.sitofp %n : i32 to f32
  kjit.store %v, %x[%pid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
)";

/// Compiles `analysis` with the exp kernel's record (the store and call
/// kernels share its parameters) for sm_90, PTX 8.0, as the runtime asks
/// for a cuda backend without libdevice.
absl::StatusOr<kjit::rt::CompiledArtifact>
compileForSm90(kjit::rt::CompilerService &service,
               const kjit::rt::ModuleAnalysis &analysis,
               const kjit::rt::SpecializationRecord &record,
               std::string_view name) {
  std::vector<std::string> formats = {"ptx"};
  std::vector<std::pair<std::string, std::string>> options = {{"ptx", "80"}};
  kjit::rt::CompileRequest request;
  request.bytecode = analysis.bytecode;
  request.sourceName = name;
  request.record = &record;
  request.target = "cuda";
  request.acceptedFormats = formats;
  request.arch = "sm_90";
  request.backendOptions = options;
  return service.compile(request);
}

/// Compiles run in contexts kept from earlier compiles (CompilerService.cpp,
/// ContextPool): each compile of a kernel gives the same PTX, and a failed
/// compile's message is its own, whatever the context compiled before.
TEST(TargetTest, CudaCompilesInKeptContextsAreIndependent) {
  absl::StatusOr<std::unique_ptr<kjit::rt::CompilerService>> made =
      makeService();
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<kjit::rt::CompilerService> service = std::move(*made);
  absl::StatusOr<kjit::rt::ModuleAnalysis> store =
      service->analyze(kStoreKernel, "store.mlir");
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<kjit::rt::ModuleAnalysis> exp =
      service->analyze(kExpKernel, "exp.mlir");
  ASSERT_TRUE(exp.ok()) << exp.status();
  absl::StatusOr<kjit::rt::SpecializationRecord> record =
      kjit::rt::specializationFromJson(kExpRecord);
  ASSERT_TRUE(record.ok()) << record.status();
  auto compile = [&](const kjit::rt::ModuleAnalysis &analysis,
                     std::string_view name) {
    return compileForSm90(*service, analysis, *record, name);
  };
  absl::StatusOr<kjit::rt::CompiledArtifact> first =
      compile(*store, "store.mlir");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_NE(first->bytes.find(".visible .entry k("), std::string::npos);
  absl::StatusOr<kjit::rt::CompiledArtifact> failed = compile(*exp, "exp.mlir");
  ASSERT_FALSE(failed.ok());
  std::string message(failed.status().message());
  EXPECT_EQ(message.find("store.mlir"), std::string::npos) << message;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<kjit::rt::CompiledArtifact> again =
        compile(*store, "store.mlir");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->bytes, first->bytes);
    EXPECT_EQ(again->metadataJson, first->metadataJson);
  }
  // Now in a context that compiled the store kernel: the same message.
  failed = compile(*exp, "exp.mlir");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(std::string(failed.status().message()), message);
}

/// The store kernel calling a noinline device function: its PTX has a call.
constexpr const char *kCallKernel = R"(
kjit.func private @twice(%v: f32) -> f32 attributes {noinline} {
  %r = arith.addf %v, %v : f32
  kjit.return %r : f32
}
kjit.kernel @k(%x: !kjit.ptr<f32>, %n: i32) {
  %pid = kjit.program_id x
  %v = arith.sitofp %n : i32 to f32
  %t = kjit.call @twice(%v) : (f32) -> f32
  kjit.store %t, %x[%pid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
)";

/// A thread keeps its NVPTX code generator between compiles
/// (lib/Target/Cuda/NvptxCodeGenerator.h): a kernel's PTX is still what a
/// fresh thread would make, also after kernels with calls (NVPTX numbers
/// calls with a counter no module resets) and before them, and on threads
/// that compile at once.
TEST(TargetTest, CudaPtxDoesNotDependOnTheThreadsEarlierCompiles) {
  absl::StatusOr<std::unique_ptr<kjit::rt::CompilerService>> made =
      makeService();
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<kjit::rt::CompilerService> service = std::move(*made);
  absl::StatusOr<kjit::rt::ModuleAnalysis> store =
      service->analyze(kStoreKernel, "store.mlir");
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<kjit::rt::ModuleAnalysis> call =
      service->analyze(kCallKernel, "call.mlir");
  ASSERT_TRUE(call.ok()) << call.status();
  absl::StatusOr<kjit::rt::SpecializationRecord> record =
      kjit::rt::specializationFromJson(kExpRecord);
  ASSERT_TRUE(record.ok()) << record.status();
  auto compile = [&](const kjit::rt::ModuleAnalysis &analysis) {
    absl::StatusOr<kjit::rt::CompiledArtifact> artifact =
        compileForSm90(*service, analysis, *record, "k.mlir");
    return artifact.ok() ? artifact->bytes
                         : "error: " + std::string(artifact.status().message());
  };
  // Each in a thread of its own: what a fresh code generator makes.
  std::string freshStore, freshCall;
  std::thread([&] { freshStore = compile(*store); }).join();
  std::thread([&] { freshCall = compile(*call); }).join();
  ASSERT_NE(freshCall.find("call.uni"), std::string::npos) << freshCall;
  ASSERT_NE(freshStore.find(".visible .entry k("), std::string::npos)
      << freshStore;
  // One thread, one kernel after the other.
  std::vector<std::string> inTurn;
  std::thread([&] {
    for (const kjit::rt::ModuleAnalysis *analysis :
         {&*store, &*store, &*call, &*call, &*store, &*call})
      inTurn.push_back(compile(*analysis));
  }).join();
  ASSERT_EQ(inTurn.size(), 6u);
  EXPECT_EQ(inTurn[0], freshStore);
  EXPECT_EQ(inTurn[1], freshStore);
  EXPECT_EQ(inTurn[2], freshCall);
  EXPECT_EQ(inTurn[3], freshCall);
  EXPECT_EQ(inTurn[4], freshStore);
  EXPECT_EQ(inTurn[5], freshCall);

  // Threads compiling at once, each with its own generator, make the same.
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> byThread(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) {
        byThread[t].push_back(compile(*call));
        byThread[t].push_back(compile(*store));
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::vector<std::string> &compiled : byThread)
    for (size_t i = 0; i < compiled.size(); ++i)
      EXPECT_EQ(compiled[i], i % 2 ? freshStore : freshCall) << i;
}

/// The runtime's compile does not verify after every pass (docs/Runtime.md,
/// "Verification"), so the host target verifies what it translates: an
/// invalid lowered module is an error naming the operation, never a crash
/// inside LLVM's translation.
TEST(TargetTest, HostRefusesToTranslateInvalidIR) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::LLVM::LLVMDialect>();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::ParserConfig unverified(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          "llvm.func @k() -> i32 {\n  llvm.return\n}\n", unverified,
          "lowered.mlir");
  ASSERT_TRUE(module);
  llvm::Expected<kjit::TargetArtifact> artifact =
      kjit::lookupTarget("host")->emitArtifact(*module, kjit::TargetOptions());
  ASSERT_FALSE(static_cast<bool>(artifact));
  EXPECT_EQ(llvm::toString(artifact.takeError()),
            "the lowered kernel module is not valid IR; nothing was "
            "translated");
  EXPECT_EQ(diagnostics, "'llvm.return' op expected 1 operand\n");
}

/// What the host link binds a kernel to: libm (expf), libgcc_s (__divti3
/// for a 128-bit division), the dynamic linker (__tls_get_addr for a
/// thread-local). lld runs in process and takes turns (HostCodegen.cpp):
/// threads linking at once each get the same bytes, and the library loads
/// and runs.
constexpr const char *kRuntimeCallsModule = R"(
llvm.func @expf(f32) -> f32
llvm.mlir.global external thread_local @kjit_test_tls(0 : i32) : i32
llvm.func @kjit_test_exp(%x: f32) -> f32 {
  %r = llvm.call @expf(%x) : (f32) -> f32
  llvm.return %r : f32
}
llvm.func @kjit_test_divide(%a: i128, %b: i128) -> i128 {
  %q = llvm.sdiv %a, %b : i128
  llvm.return %q : i128
}
llvm.func @kjit_test_count() -> i32 {
  %one = llvm.mlir.constant(1 : i32) : i32
  %p = llvm.mlir.addressof @kjit_test_tls : !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i32
  %n = llvm.add %v, %one : i32
  llvm.store %n, %p : i32, !llvm.ptr
  llvm.return %n : i32
}
)";

std::string linkHostModule(const char *text, std::string *error = nullptr) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::LLVM::LLVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context, "link.mlir");
  if (!module)
    return {};
  llvm::Expected<kjit::TargetArtifact> artifact =
      kjit::lookupTarget("host")->emitArtifact(*module, kjit::TargetOptions());
  if (!artifact) {
    std::string message = llvm::toString(artifact.takeError());
    if (error)
      *error = message;
    return {};
  }
  return artifact->bytes;
}

TEST(TargetTest, HostLinksInProcessFromManyThreads) {
  std::string first = linkHostModule(kRuntimeCallsModule);
  ASSERT_EQ(first.substr(0, 4), "\x7f"
                                "ELF");
  constexpr int kThreads = 4;
  std::vector<std::string> linked(kThreads * 3);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i)
        linked[t * 3 + i] = linkHostModule(kRuntimeCallsModule);
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &bytes : linked)
    EXPECT_EQ(bytes, first);

  // Load it as the host backend does (a memfd) and call it.
  int fd = memfd_create("kjit-link-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, first.data(), first.size()), ssize_t(first.size()));
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  close(fd);
  ASSERT_NE(library, nullptr) << dlerror();
  auto exp =
      reinterpret_cast<float (*)(float)>(dlsym(library, "kjit_test_exp"));
  auto divide = reinterpret_cast<__int128 (*)(__int128, __int128)>(
      dlsym(library, "kjit_test_divide"));
  auto count = reinterpret_cast<int (*)()>(dlsym(library, "kjit_test_count"));
  ASSERT_TRUE(exp && divide && count);
  EXPECT_FLOAT_EQ(exp(1.0f), 2.7182817f);
  __int128 big = (__int128)1 << 100;
  EXPECT_TRUE(divide(big, 3) == big / 3);
  EXPECT_EQ(count(), 1);
  EXPECT_EQ(count(), 2);
  std::thread([&] { EXPECT_EQ(count(), 1); }).join();
  dlclose(library);
}

/// A symbol nothing defines is lld's error, naming it, not a library that
/// fails to load later; the next link works.
/// A kernel with a constexpr, so that each configuration is its own
/// specialization, as the autotuner's are.
constexpr const char *kConfiguredKernel = R"(
kjit.kernel @k(%x: !kjit.ptr<f32>, %n: i32, %C: i32 {kjit.constexpr}) {
  %pid = kjit.program_id x
  %s = arith.muli %n, %C : i32
  %v = arith.sitofp %s : i32 to f32
  kjit.store %v, %x[%pid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
)";

/// Its record with C = `c` and `warps` warps.
std::string configuredRecord(int c, int warps) {
  std::string options =
      "debug=false,enable_fp_fusion=true,enable_reflect_ftz=true,"
      "launch_cooperative_grid=false,launch_pdl=false,maxnreg=none,"
      "num_ctas=1,num_stages=3,num_warps=" +
      std::to_string(warps) + ",ptx_version=none,sanitize_overflow=false";
  return R"({"version":1,"name":"k","params":["x","n","C"],"signature":)"
         R"({"x":"*fp32","n":"i32"},"spec":{"x":"D","n":"N"},"constants":)"
         R"({"C":)" +
         std::to_string(c) +
         R"(},"attrs":{"divisibility_16":["x"],"equal_to_1":[]},"options":)"
         R"({"num_warps":)" +
         std::to_string(warps) +
         R"(,"num_ctas":1,"num_stages":3,"maxnreg":null,"ptx_version":null,)"
         R"("enable_fp_fusion":true,"enable_reflect_ftz":true,)"
         R"("launch_cooperative_grid":false,"launch_pdl":false,"debug":false,)"
         R"("sanitize_overflow":false},"key":"x:*fp32:D,n:i32:N,C=)" +
         std::to_string(c) + "|" + options + R"("})";
}

/// The autotuner compiles a key's configurations on threads at once
/// (docs/Autotuning.md, "Compiling configurations in parallel"): 16
/// specializations, host ones (which link with lld, the writer of LLVM's
/// command-line options) and cuda ones (whose NVPTX code generation reads
/// them) together, compiled by 16 threads at once, twice, give the bytes
/// that compiling them one after another gives.
TEST(TargetTest, ParallelCompilesGiveTheSerialCompilesBytes) {
  absl::StatusOr<std::unique_ptr<kjit::rt::CompilerService>> made =
      makeService();
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<kjit::rt::CompilerService> service = std::move(*made);
  absl::StatusOr<kjit::rt::ModuleAnalysis> analysis =
      service->analyze(kConfiguredKernel, "configured.mlir");
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  constexpr int kConfigs = 16;
  std::vector<kjit::rt::SpecializationRecord> records;
  for (int config = 0; config < kConfigs; ++config) {
    absl::StatusOr<kjit::rt::SpecializationRecord> record =
        kjit::rt::specializationFromJson(
            configuredRecord(config / 2 + 1, 1 << (config % 4)));
    ASSERT_TRUE(record.ok()) << record.status();
    records.push_back(*record);
  }
  const std::vector<std::string> host = {"elf-shared-object"};
  const std::vector<std::string> ptx = {"ptx"};
  const std::vector<std::pair<std::string, std::string>> cudaOptions = {
      {"ptx", "80"}};
  auto compile = [&](int config) {
    kjit::rt::CompileRequest request;
    request.bytecode = analysis->bytecode;
    request.sourceName = "configured.mlir";
    request.record = &records[size_t(config)];
    if (config % 2) {
      request.target = "cuda";
      request.acceptedFormats = ptx;
      request.arch = "sm_90";
      request.backendOptions = cudaOptions;
    } else {
      request.target = "host";
      request.acceptedFormats = host;
      request.arch = "x86_64";
    }
    absl::StatusOr<kjit::rt::CompiledArtifact> artifact =
        service->compile(request);
    return artifact.ok() ? artifact->bytes
                         : "error: " + std::string(artifact.status().message());
  };
  std::vector<std::string> serial;
  for (int config = 0; config < kConfigs; ++config) {
    serial.push_back(compile(config));
    ASSERT_EQ(serial.back().rfind("error: ", 0), std::string::npos)
        << serial.back();
  }
  // Different configurations give different code (or the test would
  // prove little).
  EXPECT_NE(serial[0], serial[2]);
  EXPECT_NE(serial[1], serial[3]);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::string> parallel(kConfigs);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int config = 0; config < kConfigs; ++config)
      threads.emplace_back([&, config] {
        // All start together, so that links meet other compiles.
        ready.fetch_add(1);
        while (ready.load() < kConfigs)
          std::this_thread::yield();
        parallel[size_t(config)] = compile(config);
      });
    for (std::thread &thread : threads)
      thread.join();
    for (int config = 0; config < kConfigs; ++config)
      EXPECT_TRUE(parallel[size_t(config)] == serial[size_t(config)])
          << "pass " << pass << ", config " << config << ": "
          << parallel[size_t(config)].substr(0, 200);
  }
}

/// The gate of LLVM's command-line options (Target.h): while a writer
/// holds it, no reader does; a thread's writer inside its own reader does
/// not wait for itself; readers nest.
TEST(TargetTest, CommandLineWritersExcludeReaders) {
  {
    kjit::CommandLineReader outer;
    kjit::CommandLineReader inner;
    kjit::CommandLineWriter writer; // would wait forever for itself
  }
  std::atomic<int> readers{0}, overlaps{0}, writes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        kjit::CommandLineReader reading;
        readers.fetch_add(1);
        if (t % 2 && i % 8 == 0) {
          readers.fetch_sub(1);
          {
            kjit::CommandLineWriter writing;
            overlaps += readers.load() != 0;
            writes.fetch_add(1);
          }
          readers.fetch_add(1);
        }
        readers.fetch_sub(1);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(writes.load(), 4 * 250);
  EXPECT_EQ(overlaps.load(), 0);
}

TEST(TargetTest, HostLinkErrorIsLldsMessage) {
  std::string error;
  EXPECT_EQ(linkHostModule(R"(
llvm.func @kjit_test_nowhere(i32) -> i32
llvm.func @kjit_test_calls(%x: i32) -> i32 {
  %r = llvm.call @kjit_test_nowhere(%x) : (i32) -> i32
  llvm.return %r : i32
}
)",
                           &error),
            "");
  EXPECT_EQ(error.rfind("linking the host kernel failed: ld.lld: error: "
                        "undefined symbol: kjit_test_nowhere\n>>> referenced "
                        "by ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("kjit-host-kernel.o:(kjit_test_calls)"),
            std::string::npos)
      << error;
  EXPECT_EQ(linkHostModule(kRuntimeCallsModule).substr(0, 4), "\x7f"
                                                              "ELF");
}

/// A PTX that lacks the entry of the kernel it was compiled for is refused
/// rather than handed to the backend, which would fail to find the kernel.
/// (cuda-errors.test covers the other refusal: no kernel at all.)
TEST(TargetTest, CudaRefusesAPtxWithoutTheKernelsEntry) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          "module attributes {kjit.kernel_name = \"add\"} {\n"
          "  gpu.binary @kjit_device [#gpu.object<#nvvm.target, assembly = "
          "\".version 8.0\\0A.visible .entry add2(\\0A)\">]\n"
          "}\n",
          &context, "serialized.mlir");
  ASSERT_TRUE(module);
  llvm::Expected<kjit::TargetArtifact> artifact =
      kjit::lookupTarget("cuda")->emitArtifact(*module, kjit::TargetOptions());
  ASSERT_FALSE(static_cast<bool>(artifact));
  EXPECT_EQ(llvm::toString(artifact.takeError()),
            "the PTX has no '.entry add' for the kernel it was compiled for");
}

TEST(TargetTest, TheModuleRefusesAnotherBuildsRuntime) {
  kjit_compiler_create_service_fn create = factory();
  ASSERT_NE(create, nullptr) << dlerror();
  const char *error = nullptr;
  EXPECT_EQ(create(kjit::rt::kCompilerServiceVersion + 1, &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(error, "the runtime and the compiler library are of different "
                      "kjit builds (compiler service versions differ)");
}

} // namespace
