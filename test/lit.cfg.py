# lit configuration for kjit's IR and command-line tests.
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "kjit"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kjit_binary_dir, "test")

config.substitutions.append(("%kjit_src", config.kjit_source_dir))
# Sanitizer builds: features and runtime options (test/sanitizers/).
sys.path.insert(0, os.path.join(config.kjit_source_dir, "test", "sanitizers"))
import lit_sanitizers  # noqa: E402

lit_sanitizers.configure(config)
config.substitutions.append(("%kjit_libs", config.kjit_lib_dir))
config.substitutions.append(("%kjit_tools", config.kjit_tools_dir))
# The kjit.key attribute of kernel @k, from IR printed by kjit-opt.
config.substitutions.append(
    ("%kernel-key",
     "grep -o 'kjit\\.kernel @k(.*' | grep -o 'kjit\\.key = \"[0-9a-f]*\"'"))
# The Debian python3 that runs lit also runs the tests' reference scripts.
config.substitutions.append(("%python", sys.executable))
# The Python package (python/): the tests run it with the Debian python3
# that runs lit (numpy comes from python3-numpy).
if config.kjit_python_dir and os.path.isdir(config.kjit_python_dir):
    config.available_features.add("python-package")
    config.substitutions.append(
        ("%kjit-python", "env PYTHONPATH=%s %s" % (config.kjit_python_dir, sys.executable)))
config.substitutions.append(("%examples", os.path.join(config.kjit_source_dir, "examples")))
# Plugin ABI tests: the test plugins built from test/Plugins/Inputs, and the
# C compiler of the build (to show that the layout freeze catches a break).
config.substitutions.append(
    ("%test_plugins", os.path.join(config.kjit_binary_dir, "test", "Plugins", "plugins")))
config.substitutions.append(("%cc", config.kjit_c_compiler))
# Install tests (test/Install): the build tree to install from, and CMake with
# the build's compilers and generator for the projects built against it.
config.substitutions.append(("%kjit_build", config.kjit_binary_dir))
config.substitutions.append(("%cmake_build_type", config.kjit_build_type))
# In a sanitizer build the projects are instrumented too: an executable
# without the sanitizer runtime cannot load an instrumented kjit library.
sanitize_flags = ""
if config.kjit_sanitize:
    flag = "-fsanitize=" + config.kjit_sanitize
    sanitize_flags = "".join(
        " '-D%s=%s'" % (var, flag)
        for var in ("CMAKE_C_FLAGS", "CMAKE_CXX_FLAGS", "CMAKE_EXE_LINKER_FLAGS",
                    "CMAKE_SHARED_LINKER_FLAGS", "CMAKE_MODULE_LINKER_FLAGS"))
config.substitutions.append(("%cmake-project",
    "%s --no-warn-unused-cli -G '%s' -DCMAKE_MAKE_PROGRAM=%s -DCMAKE_C_COMPILER=%s -DCMAKE_CXX_COMPILER=%s%s"
    % (config.cmake_command, config.cmake_generator, config.cmake_make_program,
       config.kjit_c_compiler,
       config.kjit_cxx_compiler, sanitize_flags)))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%llvm_tools", config.llvm_tools_dir))
# A program that embeds the runtime (test/Runtime/Inputs/embed.cpp).
config.substitutions.append(
    ("%kjit-embed", os.path.join(config.kjit_binary_dir, "test", "Runtime", "bin", "kjit-embed")))
config.substitutions.append(
    ("%runtime_plugins", os.path.join(config.kjit_binary_dir, "test", "Runtime", "plugins")))
# Host backend tests: the hand-written kernel objects of test/HostBackend and
# the driver with the host plugin already named.
config.substitutions.append(
    ("%host_kernels", os.path.join(config.kjit_binary_dir, "test", "HostBackend", "kernels")))
config.substitutions.append(
    ("%host-driver",
     "kjit-host-driver --plugin=" + os.path.join(config.kjit_lib_dir, "libkjit-host.so")))
if os.path.exists(os.path.join(config.kjit_lib_dir, "libkjit-host.so")):
    config.available_features.add("host-backend")
# The disk cache's test programs (test/Cache/CMakeLists.txt).
cache_bin = os.path.join(config.kjit_binary_dir, "test", "Cache", "bin")
config.substitutions.append(("%cache-torture", os.path.join(cache_bin, "kjit-cache-torture")))
config.substitutions.append(("%cache-race", os.path.join(cache_bin, "kjit-cache-race")))
config.substitutions.append(("%maps-probe", os.path.join(cache_bin, "libkjit-test-MapsProbe.so")))
config.substitutions.append(("%fault-shim", os.path.join(cache_bin, "libkjit-test-FaultShim.so")))
remote_bin = os.path.join(config.kjit_binary_dir, "test", "RemoteCache", "bin")
config.substitutions.append(("%dirstore", os.path.join(remote_bin, "libkjit-test-dirstore.so")))
config.substitutions.append(("%checked-host", os.path.join(remote_bin, "libkjit-test-checked-host.so")))
config.substitutions.append(("%remote-tamper", os.path.join(remote_bin, "kjit-remote-tamper")))
config.substitutions.append(("%tuning-tamper", os.path.join(
    config.kjit_binary_dir, "test", "Autotune", "bin", "kjit-tuning-tamper")))
import shutil
if shutil.which("redis-server") and os.path.exists(
        os.path.join(config.kjit_lib_dir, "libkjit-redis.so")):
    config.available_features.add("redis-server")
config.substitutions.append(("%redis-fixture", "%s %s" % (
    sys.executable, os.path.join(config.kjit_source_dir, "test", "Redis", "redis_fixture.py"))))
if os.getuid() == 0:
    config.available_features.add("root")
# The device bundle's static compiler module (KJIT_BUNDLE, test/Bundle).
config.substitutions.append(("%kjit_bundle_lib", config.kjit_bundle_lib_dir))
if config.kjit_bundle.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("kjit-bundle")

# The benchmarks of bench/ (KJIT_ENABLE_BENCHMARKS), run once in test/Bench.
if config.kjit_benchmarks.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("benchmarks")

# The cuda target: libdevice and the CUDA tools are the machine's, never
# shipped. Tests that link libdevice require `libdevice`; the ones that
# assemble the PTX require `ptxas` (and `cuobjdump` to disassemble it). CI
# without CUDA runs the rest.
cuda_home = os.environ.get("KJIT_TEST_CUDA_HOME", "/usr/local/cuda")
libdevice = os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")
if os.path.isfile(libdevice):
    config.available_features.add("libdevice")
    config.substitutions.append(("%libdevice", libdevice))
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
cuobjdump = os.path.join(cuda_home, "bin", "cuobjdump")
if os.access(cuobjdump, os.X_OK):
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))

# Host code generation for a CPU with FMA instructions (x86-64 `fma`): what
# enable_fp_fusion changes on the host target is then visible.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if any(line.startswith("flags") and " fma" in line for line in cpuinfo):
            config.available_features.add("host-fma")
except OSError:
    pass

# FileCheck, not, count and split-file come from LLVM 22's directory, never
# from PATH: the base image also has LLVM 14.
llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kjit_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# The disk cache is off in every test unless the test turns it on with a
# directory of its own (env KJIT_CACHE_DIR=%t/cache): most tests count
# compiles, lit runs them in parallel, and none may write to the user's
# cache home or depend on what an earlier test stored (test/Cache/).
config.environment["KJIT_CACHE_DIR"] = ""
for name in ("KJIT_CACHE_MAX_SIZE", "KJIT_CACHE_LOCK_TIMEOUT", "KJIT_CACHE_FSYNC",
             "KJIT_CACHE_VERBOSE", "KJIT_CACHE_SALT", "XDG_CACHE_HOME",
             # The fleet cache: a developer's own settings never reach a test.
             "KJIT_REDIS_KEY_FILE", "KJIT_REMOTE_CACHE_TTL", "KJIT_REDIS_URL",
             "KJIT_REDIS_PASSWORD_FILE", "KJIT_REDIS_NAMESPACE", "KJIT_REDIS_TIMEOUT",
             "KJIT_REDIS_CONNECT_TIMEOUT", "KJIT_REDIS_RETRY_AFTER",
             "KJIT_REDIS_MAX_VALUE_SIZE"):
    config.environment.pop(name, None)
tool_dirs = [config.kjit_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["kjit-opt", ToolSubst("mlir-opt", unresolved="fatal"),
     ToolSubst("llvm-nm", unresolved="fatal"),
     ToolSubst("llvm-readelf", unresolved="fatal"),
     ToolSubst("llvm-objdump", unresolved="fatal"),
     ToolSubst("llvm-dwarfdump", unresolved="fatal")],
    tool_dirs)
