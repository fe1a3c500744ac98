//===- BackendDriver.h - what the backend test drivers share ----*- C++ -*-===//
//
// kjit-host-driver (test/HostBackend) and kjit-cuda-driver (test/CudaBackend)
// drive one backend plugin each through kjit::plugin::PluginHost from the
// command line, so that lit can check a backend's every entry without the
// runtime above it. What they have in common lives here: the launch
// arguments of the command line (ARG below), encoded by the runtime's own
// rules as a launch would encode them; the commands every backend answers
// (describe, options, finalize, unload); the settings of the next launch;
// and ABI 1.4's values, passed as the runtime passes them.
//
// ARG (optionally NAME=ARG; the default name is aI). A value the runtime's
// rules (kjit/Model/ArgEncoding.h) refuse is an "argument error" and nothing
// runs.
//   buf:TYPE:COUNT[:INIT]     a buffer of TYPE (fp32, fp64, i8..i64, u8..u64;
//                             fp16 and bf16 are raw 16-bit); INIT is zero
//                             (default), iota (element i holds i) or a number
//   hostbuf:TYPE:COUNT[:INIT] (where the driver allows it) a buffer left in
//                             host memory when the others go to the device
//   TYPE:VALUE                a scalar of signature type TYPE (i1, iN, uN,
//                             fp16, bf16, fp32, fp64, ...)
//   null:TYPE                 None for a parameter of signature type TYPE
//   old:TYPE:VALUE            TYPE:VALUE as a kjit_arg of ABI 1.0's size
//   raw:TYPE:DTYPE:FLAGS:SIZE:BITS  a kjit_arg with these storage fields
//                             (numbers), for the backend's refusals
//   constexpr:VALUE           a constexpr int argument (the backend skips it)
//
// Commands and settings every driver has:
//   describe[:DEVICE]         device_count, describe, fingerprint (twice,
//                             which must agree)
//   options:N=V[,N=V...]      parse_options (then destroy_options)
//   finalize:FORMAT:FILE:K    finalize FILE as FORMAT for kernel K
//   unload                    unload the kernel loaded last
//   --repeat=N --shared=BYTES --flags=BITS --cluster=X[,Y,Z] --time
//                             settings of the next launch
//   --values                  the next launch as the runtime makes it (ABI
//                             1.4): the kernel loaded last is loaded again
//                             with the launch's arguments as its template;
//                             when the backend takes it ("template taken"),
//                             the launch passes values alone
//   --values-count=N          with --values, pass N values instead
//   --values-untaken          pass values to the kernel loaded last, whose
//                             load took no template
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TEST_DRIVERS_BACKENDDRIVER_H
#define KJIT_TEST_DRIVERS_BACKENDDRIVER_H

#include "kjit/Model/ArgEncoding.h"
#include "kjit/Plugin/PluginHost.h"

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::driver {

/// The program's name in usage errors; main sets it first.
extern const char *toolName;

/// Prints "TOOL: MESSAGE" to stderr and exits with 2 (a command line the
/// driver cannot run, as opposed to a backend's error, which is a line on
/// stdout).
[[noreturn]] void usage(const std::string &message);

std::string str(const absl::Status &status);
std::vector<std::string> split(std::string_view text, char separator);
/// The file's bytes; a usage error when it cannot be read.
std::string readFile(const std::string &path);
/// Element size of a buffer type, 0 when unknown.
size_t elementSize(const std::string &type);

/// A buffer argument: its element type and bytes (8-byte aligned storage).
struct Buffer {
  std::string type;
  size_t count = 0;
  /// hostbuf: stays in host memory (for the backend's refusal).
  bool hostOnly = false;
  /// The device copy while placed (LaunchArgs::place), else 0.
  uint64_t device = 0;
  std::vector<uint64_t> storage;
  void *data() { return storage.data(); }
  size_t bytes() const { return count * elementSize(type); }

  void fill(const std::string &init);
  void set(size_t i, double v);
  std::string format(size_t i) const;
};

/// The arguments of one launch as the ABI's kjit_args; their views point
/// into `strings`.
struct LaunchArgs {
  std::deque<std::string> strings;
  std::deque<Buffer> buffers;
  std::deque<kjit_arg> storage;
  std::vector<const kjit_arg *> args;
  /// The kjit_arg of each buffer, in buffer order.
  std::vector<kjit_arg *> bufferArgs;
  /// The first argument the runtime's rules refused, or empty.
  std::string error;

  /// Parses the ARG words; `hostBuffers` allows hostbuf.
  void parse(const std::vector<std::string> &words, bool hostBuffers);
  /// Allocates the device copy of every buffer but hostbufs through the
  /// backend's device memory and points its argument there; an error line
  /// when the backend refuses.
  std::string place(const plugin::BackendRef &backend);
  /// Copies every placed buffer back and frees its device copy; error
  /// lines, if any.
  std::string retrieve(const plugin::BackendRef &backend);
  /// "bufK = v0 v1 ..." for every buffer.
  std::string dump() const;

private:
  std::string_view keep(std::string s);
  void encode(kjit_arg &arg, std::string_view typeText,
              const rt::Argument &value);
};

/// What a launch passes under --values or --values-untaken (ABI 1.4), kept
/// alive for the launch; BackendDriver::dropValues unloads the template's
/// kernel afterwards.
struct Values {
  std::vector<uint64_t> bits;
  /// The kernel loaded with the launch's template, or null.
  void *templated = nullptr;
};

/// The plugin host, the backend driven, the kernels loaded and the next
/// launch's settings; each driver adds its own commands around it.
class BackendDriver {
public:
  plugin::PluginHost host;
  plugin::BackendRef backend;
  /// Loaded kernels (name, handle), the last is current, with the loadable
  /// each was loaded from.
  std::vector<std::pair<std::string, void *>> kernels;
  std::vector<std::string> loadables;

  // The next launch's settings; each driver's launch resets them
  // (resetSettings).
  enum class ValuesMode { None, Template, Untaken } values = ValuesMode::None;
  long valuesCount = -1; // -1: one per argument
  unsigned repeat = 1, shared = 0, flags = 0;
  std::array<uint32_t, 3> cluster = {0, 0, 0};
  bool time = false;

  /// describe prints the backend's compile options too.
  bool describeOptions = false;

  virtual ~BackendDriver() = default;

  /// A line on stdout, flushed (a kernel's own prints come in order).
  void say(const std::string &line);

  /// Runs `word` when it is a command or setting of every driver (the list
  /// above); false when it is not one.
  bool runCommon(const std::string &word);
  /// Whether `word` starts a command or setting of every driver (ends a
  /// launch's ARG list).
  static bool isCommon(std::string_view word);

  void describe(int32_t device);
  void options(const std::string &list);
  /// finalize through the backend, with the "finalize ..." line; false on
  /// the backend's error.
  bool finalize(const std::string &format, const std::string &file,
                const std::string &kernel, std::string &loadable);
  /// finalize, then load; "load ok: K" or the error.
  void load(const std::string &format, const std::string &file,
            const std::string &kernel);
  void unload();
  /// Unloads what is still loaded, saying the errors, and shuts the host
  /// down.
  void finish();

  /// The launch arguments of the kernel loaded last with the settings:
  /// grid and warps from "GX[,GY,GZ]:WARPS" (a usage error otherwise).
  kjit_backend_launch_args launchArgs(const std::string &spec);
  /// Applies the values settings to `launch` of `args`: a template load
  /// ("template taken" or "template not taken" added to `said`), the
  /// values. False, with the line in `said`, when the template load fails.
  bool passValues(kjit_backend_launch_args &launch, const LaunchArgs &args,
                  Values &values, std::string &said);
  /// Unloads a template's kernel; an error line or empty.
  std::string dropValues(Values &values);
  /// Runs the launch `repeat` times (stopping at an error); the time per
  /// call in `us`.
  absl::Status launchRepeated(kjit_backend_launch_args &launch, double &us);
  /// The time line of --time (empty without it).
  std::string timeLine(const char *what, double us) const;
  /// Resets the next launch's settings.
  virtual void resetSettings();

protected:
  /// What the "finalize ok: N bytes" line adds about the loadable made
  /// from `input`.
  virtual std::string describeLoadable(const std::string &input,
                                       const std::string &loadable) = 0;
};

} // namespace kjit::driver

#endif // KJIT_TEST_DRIVERS_BACKENDDRIVER_H
