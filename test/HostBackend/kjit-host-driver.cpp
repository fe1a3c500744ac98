//===- kjit-host-driver.cpp - runs host kernels through the host backend --===//
//
// A test tool: loads the host backend plugin through
// kjit::plugin::PluginHost, finalizes and loads kernel objects, launches
// them with arguments given on the command line (allocating and filling the
// buffers), and prints every buffer afterwards ("bufK = ..." for the K-th
// buffer argument), so that lit can check the results against values
// computed independently. Driver lines go to stdout, flushed before each
// launch so that the kernels' own prints (one write(2) per line) appear in
// order; the host's log goes to stderr.
//
// Usage: kjit-host-driver --plugin=PATH [--backend=NAME] COMMAND...
//   --backend=NAME            drive the backend of this name (default host;
//                             a wrapper such as examples/plugins/checked-host)
//   describe[:DEVICE]         print device_count, describe and the
//                             fingerprint (twice, which must agree)
//   options:N=V[,N=V...]      parse_options (then destroy_options)
//   finalize:FORMAT:FILE:K    finalize FILE as FORMAT for kernel K
//   load:FILE:K               finalize then load kernel K from FILE
//   unload                    unload the kernel loaded last
//   memory:DEVICE:SIZE        allocate SIZE bytes on DEVICE, copy a pattern
//                             in and back, compare, deallocate (ABI 1.2)
//   launch:GX[,GY,GZ]:WARPS ARG...   launch the kernel loaded last
//   --repeat=N                the next launch runs N times (bench: --time)
//   --time                    print the time per launch of the next launch
//   --shared=BYTES            the next launch asks for dynamic shared memory
//   --flags=BITS              the next launch has these KJIT_LAUNCH_* flags
//   --cluster=X[,Y,Z]         the next launch asks for clusters
//   --concurrent=K            the next launch runs from K threads at once,
//                             each with its own buffers; results must agree
//   --values                  the next launch as the runtime makes it (ABI
//                             1.4): the kernel loaded last is loaded again
//                             with the launch's arguments as its template;
//                             when the backend takes it ("template taken"),
//                             the launch passes values alone
//   --values-count=N          with --values, pass N values instead
//   --values-untaken          pass values to the kernel loaded last, whose
//                             load took no template
// ARG (optionally NAME=ARG; the default name is aI). Every value is encoded
// by the runtime's own rules (kjit/Model/ArgEncoding.h), as a launch
// would; a value those rules refuse is an "argument error" and nothing runs.
//   buf:TYPE:COUNT[:INIT]     a buffer of TYPE (fp32, fp64, i8..i64, u8..u64;
//                             fp16 and bf16 are raw 16-bit); INIT is zero
//                             (default), iota (element i holds i) or a number
//   TYPE:VALUE                a scalar of signature type TYPE (i1, iN, uN,
//                             fp16, bf16, fp32, fp64, ...)
//   null:TYPE                 None for a parameter of signature type TYPE
//   old:TYPE:VALUE            TYPE:VALUE as a kjit_arg of ABI 1.0's size
//   raw:TYPE:DTYPE:FLAGS:SIZE:BITS  a kjit_arg with these storage fields
//                             (numbers), for the backend's refusals
//   constexpr:VALUE           a constexpr int argument (the backend skips it)
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/ArgEncoding.h"
#include "kjit/Plugin/PluginHost.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace kjit::plugin;

namespace {

[[noreturn]] void usage(const std::string &message) {
  std::fprintf(stderr, "kjit-host-driver: %s\n", message.c_str());
  std::exit(2);
}

std::string str(const absl::Status &status) {
  return std::string(status.message());
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos)
      return parts;
    start = end + 1;
  }
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    usage("cannot read '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Element size of a buffer type, 0 when unknown.
size_t elementSize(const std::string &type) {
  if (type == "i8" || type == "u8")
    return 1;
  if (type == "i16" || type == "u16" || type == "fp16" || type == "bf16")
    return 2;
  if (type == "i32" || type == "u32" || type == "fp32")
    return 4;
  if (type == "i64" || type == "u64" || type == "fp64")
    return 8;
  return 0;
}

/// A buffer argument: its element type and bytes (8-byte aligned storage).
struct Buffer {
  std::string type;
  size_t count;
  std::vector<uint64_t> storage;
  void *data() { return storage.data(); }

  void fill(const std::string &init) {
    for (size_t i = 0; i < count; ++i) {
      double v =
          init == "iota" ? double(i) : std::strtod(init.c_str(), nullptr);
      set(i, v);
    }
  }
  void set(size_t i, double v) {
    char *p = static_cast<char *>(data()) + i * elementSize(type);
    auto put = [&](auto value) { std::memcpy(p, &value, sizeof value); };
    if (type == "fp32")
      put(float(v));
    else if (type == "fp64")
      put(v);
    else if (type == "i8")
      put(int8_t(v));
    else if (type == "i16")
      put(int16_t(v));
    else if (type == "i32")
      put(int32_t(v));
    else if (type == "i64")
      put(int64_t(v));
    else if (type == "u8")
      put(uint8_t(v));
    else if (type == "u16" || type == "fp16" || type == "bf16")
      put(uint16_t(v));
    else if (type == "u32")
      put(uint32_t(v));
    else
      put(uint64_t(v));
  }
  std::string format(size_t i) const {
    const char *p =
        reinterpret_cast<const char *>(storage.data()) + i * elementSize(type);
    char text[64];
    auto get = [&](auto value) {
      std::memcpy(&value, p, sizeof value);
      return value;
    };
    if (type == "fp32")
      std::snprintf(text, sizeof text, "%.9g", double(get(float())));
    else if (type == "fp64")
      std::snprintf(text, sizeof text, "%.17g", get(double()));
    else if (type == "i8")
      std::snprintf(text, sizeof text, "%d", int(get(int8_t())));
    else if (type == "i16")
      std::snprintf(text, sizeof text, "%d", int(get(int16_t())));
    else if (type == "i32")
      std::snprintf(text, sizeof text, "%" PRId32, get(int32_t()));
    else if (type == "i64")
      std::snprintf(text, sizeof text, "%" PRId64, get(int64_t()));
    else if (type == "u8")
      std::snprintf(text, sizeof text, "%u", unsigned(get(uint8_t())));
    else if (type == "u16" || type == "fp16" || type == "bf16")
      std::snprintf(text, sizeof text, "0x%04x", unsigned(get(uint16_t())));
    else if (type == "u32")
      std::snprintf(text, sizeof text, "%" PRIu32, get(uint32_t()));
    else
      std::snprintf(text, sizeof text, "%" PRIu64, get(uint64_t()));
    return text;
  }
};

/// The arguments of one launch as the ABI's kjit_args; their views point
/// into `strings`.
struct LaunchArgs {
  std::deque<std::string> strings;
  std::deque<Buffer> buffers;
  std::deque<kjit_arg> storage;
  std::vector<const kjit_arg *> args;
  /// The first argument the runtime's rules refused, or empty.
  std::string error;

  std::string_view keep(std::string s) {
    strings.push_back(std::move(s));
    return strings.back();
  }

  /// Encodes `value` for `typeText` into `arg` as a launch would.
  void encode(kjit_arg &arg, std::string_view typeText,
              const kjit::rt::Argument &value) {
    std::optional<kjit::rt::SigType> type = kjit::rt::parseSigType(typeText);
    if (!type)
      usage("unknown signature type '" + std::string(typeText) + "'");
    absl::Status s = kjit::rt::encodeArgument(*type, value, arg);
    if (!s.ok() && error.empty())
      error = "argument " + std::to_string(args.size()) + " ('" +
              std::string(arg.name, arg.name_len) + "'): " + str(s);
  }

  /// A scalar of `type` written `text`, as a host language would pass it.
  static kjit::rt::Argument scalar(std::string_view type,
                                   const std::string &text) {
    // Integer types are spelled iN and uN; every other scalar is a float.
    bool isFloat =
        !type.empty() && type[0] != '*' && type[0] != 'i' && type[0] != 'u';
    if (isFloat)
      return kjit::rt::Argument::fp(std::strtod(text.c_str(), nullptr));
    std::optional<kjit::rt::Int128> v = kjit::rt::parseInt128(text);
    if (!v)
      usage("cannot parse integer '" + text + "'");
    return kjit::rt::Argument::integer(*v);
  }

  void parse(const std::vector<std::string> &words) {
    for (const std::string &word0 : words) {
      std::string word = word0, name = "a" + std::to_string(args.size());
      if (size_t eq = word.find('=');
          eq != std::string::npos && word.find(':') > eq) {
        name = word.substr(0, eq);
        word = word.substr(eq + 1);
      }
      std::vector<std::string> f = split(word, ':');
      kjit_arg &a = storage.emplace_back();
      std::memset(&a, 0, sizeof a);
      a.struct_size = sizeof a;
      std::string_view n = keep(name);
      a.name = n.data();
      a.name_len = n.size();
      auto setType = [&](std::string text) {
        std::string_view t = keep(std::move(text));
        a.type = t.data();
        a.type_len = t.size();
        return t;
      };
      if (f[0] == "buf" && (f.size() == 3 || f.size() == 4)) {
        Buffer b;
        b.type = f[1];
        b.count = std::strtoull(f[2].c_str(), nullptr, 10);
        std::optional<kjit::rt::DType> dtype = kjit::rt::parseDType(b.type);
        if (!elementSize(b.type) || !dtype)
          usage("unknown buffer type '" + b.type + "'");
        b.storage.assign((b.count * elementSize(b.type) + 7) / 8 + 1, 0);
        if (f.size() == 4 && f[3] != "zero")
          b.fill(f[3]);
        buffers.push_back(std::move(b));
        encode(a, setType("*" + f[1]),
               kjit::rt::Argument::tensor(
                   reinterpret_cast<uintptr_t>(buffers.back().data()), *dtype));
      } else if (f[0] == "null" && f.size() == 2) {
        encode(a, setType(f[1]), kjit::rt::Argument::none());
      } else if (f[0] == "constexpr" && f.size() == 2) {
        setType("constexpr");
        a.kind = KJIT_ARG_INT;
        a.is_constexpr = 1;
        a.int_value = std::strtoll(f[1].c_str(), nullptr, 0);
      } else if (f[0] == "old" && f.size() == 3) {
        encode(a, setType(f[1]), scalar(f[1], f[2]));
        a.struct_size = KJIT_STRUCT_SIZE(kjit_arg, string_len);
      } else if (f[0] == "raw" && f.size() == 6) {
        setType(f[1]);
        a.kind = KJIT_ARG_INT;
        a.dtype = int32_t(std::strtol(f[2].c_str(), nullptr, 0));
        a.flags = uint32_t(std::strtoul(f[3].c_str(), nullptr, 0));
        a.bits_size = uint32_t(std::strtoul(f[4].c_str(), nullptr, 0));
        a.bits = std::strtoull(f[5].c_str(), nullptr, 0);
      } else if (f.size() == 2) {
        encode(a, setType(f[0]), scalar(f[0], f[1]));
      } else {
        usage("cannot parse argument '" + word0 + "'");
      }
      args.push_back(&a);
    }
  }

  std::string dump() const {
    std::string out;
    for (size_t k = 0; k < buffers.size(); ++k) {
      const Buffer &b = buffers[k];
      out += "buf" + std::to_string(k) + " =";
      for (size_t i = 0; i < b.count; ++i)
        out += " " + b.format(i);
      out += "\n";
    }
    return out;
  }
};

struct Driver {
  PluginHost host;
  BackendRef backend;
  std::vector<std::pair<std::string, void *>> kernels; // loaded, last current
  std::vector<std::string> loadables;                  // of `kernels`
  /// The next launch's values (ABI 1.4): none, through a template load,
  /// or without one.
  enum class Values { None, Template, Untaken } values = Values::None;
  long valuesCount = -1; // -1: one per argument
  unsigned repeat = 1, concurrent = 1, shared = 0, flags = 0;
  std::array<uint32_t, 3> cluster = {0, 0, 0};
  bool time = false;

  void say(const std::string &line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  void memory(int32_t device, uint64_t size) {
    if (!backend.hasDeviceMemory())
      return say("memory: the backend has no device memory");
    absl::StatusOr<uint64_t> address = backend.allocate(device, size);
    if (!address.ok())
      return say("allocate error: " + str(address.status()));
    std::string in(size, '\0'), out(size, '\0');
    for (uint64_t k = 0; k < size; ++k)
      in[k] = char(k * 7 + 1);
    absl::Status s = backend.copyToDevice(device, *address, in.data(), size);
    if (s.ok())
      s = backend.copyToHost(device, out.data(), *address, size);
    say("memory device=" + std::to_string(device) +
        " size=" + std::to_string(size) +
        " aligned256=" + (*address % 256 == 0 ? "yes" : "no") + " " +
        (!s.ok()     ? "copy error: " + str(s)
         : in == out ? "roundtrip ok"
                     : "roundtrip DIFFERS"));
    if (absl::Status freed = backend.deallocate(device, *address); !freed.ok())
      say("deallocate error: " + str(freed));
  }

  void describe(int32_t device) {
    absl::StatusOr<int32_t> count = backend.deviceCount();
    if (!count.ok())
      return say("device_count error: " + str(count.status()));
    say("device_count " + std::to_string(*count));
    absl::StatusOr<BackendRef::Description> d = backend.describe(device);
    if (!d.ok())
      return say("describe error: " + str(d.status()));
    std::string formats, uuid;
    for (const std::string &f : d->formats)
      formats += (formats.empty() ? "" : ",") + f;
    for (uint8_t b : d->uuid) {
      char two[3];
      std::snprintf(two, sizeof two, "%02x", b);
      uuid += two;
    }
    say("describe target=" + d->target + " arch=" + d->arch +
        " warp=" + std::to_string(d->warpSize) + " formats=" + formats +
        " sms=" + std::to_string(d->multiprocessorCount) +
        " threads=" + std::to_string(d->maxThreadsPerBlock) +
        " smem=" + std::to_string(d->maxSharedMemoryPerBlock) + " uuid=" +
        (uuid.find_first_not_of('0') == std::string::npos ? std::string("none")
                                                          : uuid));
    absl::StatusOr<std::string> fp = backend.fingerprint(device);
    if (!fp.ok())
      return say("fingerprint error: " + str(fp.status()));
    say("fingerprint " + *fp);
    absl::StatusOr<std::string> again = backend.fingerprint(device);
    say(again.ok() && *again == *fp ? "fingerprint stable"
                                    : "fingerprint CHANGED between calls");
  }

  void options(const std::string &list) {
    std::vector<std::string> items;
    if (!list.empty())
      items = split(list, ',');
    std::vector<std::pair<std::string_view, std::string_view>> options;
    std::deque<std::string> keep;
    for (const std::string &item : items) {
      size_t eq = item.find('=');
      keep.push_back(item.substr(0, eq));
      std::string_view n = keep.back();
      keep.push_back(eq == std::string::npos ? "" : item.substr(eq + 1));
      options.emplace_back(n, keep.back());
    }
    absl::StatusOr<void *> handle = backend.parseOptions(options);
    if (!handle.ok())
      return say("parse_options error: " + str(handle.status()));
    backend.destroyOptions(*handle);
    say("parse_options ok");
  }

  bool finalize(const std::string &format, const std::string &file,
                const std::string &kernel, std::string &loadable) {
    std::string bytes = readFile(file);
    absl::StatusOr<std::string> out =
        backend.finalize(/*device=*/0, format, bytes, kernel);
    if (!out.ok()) {
      say("finalize error: " + str(out.status()));
      return false;
    }
    loadable = std::move(*out);
    say("finalize ok: " + std::to_string(loadable.size()) + " bytes" +
        (loadable == bytes ? ", unchanged" : ", changed"));
    return true;
  }

  void load(const std::string &file, const std::string &kernel) {
    std::string loadable;
    if (!finalize("elf-shared-object", file, kernel, loadable))
      return;
    absl::StatusOr<void *> handle =
        backend.load(/*device=*/0, loadable, kernel);
    if (!handle.ok())
      return say("load error: " + str(handle.status()));
    kernels.emplace_back(kernel, *handle);
    loadables.push_back(std::move(loadable));
    say("load ok: " + kernel);
  }

  void unload() {
    if (kernels.empty())
      usage("unload without a loaded kernel");
    if (absl::Status s = backend.unload(kernels.back().second); !s.ok())
      say("unload error: " + str(s));
    else
      say("unload ok: " + kernels.back().first);
    kernels.pop_back();
    loadables.pop_back();
  }

  /// Runs one launch (repeat times); returns the status line.
  std::string runOnce(const std::string &kernel, void *handle,
                      std::array<uint32_t, 3> grid, uint32_t warps,
                      LaunchArgs &args, double *usPerLaunch) {
    if (!args.error.empty())
      return "argument error: " + args.error;
    kjit_backend_launch_args launch;
    std::memset(&launch, 0, sizeof launch);
    launch.struct_size = sizeof launch;
    launch.kernel = handle;
    for (int i = 0; i < 3; ++i)
      launch.grid[i] = grid[i];
    launch.num_warps = warps;
    launch.shared_memory_bytes = shared;
    launch.flags = flags;
    for (int i = 0; i < 3; ++i)
      launch.cluster[i] = cluster[i];
    launch.num_args = args.args.size();
    launch.args = args.args.data();
    // Values alone, as the runtime passes them to a kernel whose load took
    // its template.
    std::string said;
    std::vector<uint64_t> bits;
    void *templated = nullptr;
    if (values != Values::None) {
      for (const kjit_arg *a : args.args)
        bits.push_back(a->bits);
      if (valuesCount >= 0)
        bits.resize(size_t(valuesCount));
    }
    if (values == Values::Template) {
      absl::StatusOr<BackendRef::LoadedKernel> loaded =
          backend.load(0, loadables.back(), kernel, args.args);
      if (!loaded.ok())
        return "template load error: " + str(loaded.status());
      templated = loaded->kernel;
      launch.kernel = templated;
      said = loaded->takesValues ? "template taken\n" : "template not taken\n";
      if (!loaded->takesValues)
        bits.clear();
    }
    if (values == Values::Untaken || !bits.empty()) {
      launch.values = bits.data();
      launch.num_args = bits.size();
      launch.args = nullptr;
    }
    absl::Status status;
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < repeat && status.ok(); ++i)
      status = backend.launchPrepared(launch);
    auto end = std::chrono::steady_clock::now();
    if (usPerLaunch)
      *usPerLaunch =
          std::chrono::duration<double, std::micro>(end - start).count() /
          repeat;
    if (templated)
      if (absl::Status s = backend.unload(templated); !s.ok())
        said += "unload error: " + str(s) + "\n";
    return said + (status.ok() ? "launch ok" : "launch error: " + str(status));
  }

  void launch(const std::string &spec, const std::vector<std::string> &words) {
    if (kernels.empty())
      usage("launch without a loaded kernel");
    std::vector<std::string> f = split(spec, ':');
    if (f.size() != 2)
      usage("launch wants launch:GRID:WARPS");
    std::vector<std::string> g = split(f[0], ',');
    std::array<uint32_t, 3> grid = {1, 1, 1};
    for (size_t i = 0; i < g.size() && i < 3; ++i)
      grid[i] = uint32_t(std::strtoul(g[i].c_str(), nullptr, 10));
    uint32_t warps = uint32_t(std::strtoul(f[1].c_str(), nullptr, 10));
    const auto &[name, handle] = kernels.back();

    std::vector<std::unique_ptr<LaunchArgs>> instances;
    for (unsigned i = 0; i < concurrent; ++i) {
      instances.push_back(std::make_unique<LaunchArgs>());
      instances.back()->parse(words);
    }
    std::vector<std::string> lines(concurrent);
    double us = 0;
    if (concurrent == 1) {
      lines[0] = runOnce(name, handle, grid, warps, *instances[0], &us);
    } else {
      std::vector<std::thread> threads;
      for (unsigned i = 0; i < concurrent; ++i)
        threads.emplace_back([&, i] {
          lines[i] = runOnce(name, handle, grid, warps, *instances[i], nullptr);
        });
      for (std::thread &t : threads)
        t.join();
    }
    std::string dump = instances[0]->dump();
    for (unsigned i = 1; i < concurrent; ++i)
      if (lines[i] != lines[0] || instances[i]->dump() != dump)
        say("concurrent launch " + std::to_string(i) +
            " disagrees: " + lines[i]);
    if (concurrent > 1)
      say(std::to_string(concurrent) + " concurrent launches done");
    say(lines[0]);
    if (time) {
      char text[96];
      std::snprintf(text, sizeof text, "time: %.3f us per launch (%u launches)",
                    us, repeat);
      say(text);
    }
    std::fputs(dump.c_str(), stdout);
    std::fflush(stdout);
    repeat = concurrent = 1;
    shared = flags = 0;
    cluster = {0, 0, 0};
    time = false;
    values = Values::None;
    valuesCount = -1;
  }
};

bool isCommand(std::string_view w) {
  for (std::string_view c :
       {"describe", "options:", "finalize:", "load:", "unload",
        "memory:", "launch:", "--repeat=", "--time",
        "--concurrent=", "--shared=", "--flags=", "--cluster=", "--values"})
    if (w.substr(0, c.size()) == c)
      return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  Driver d;
  std::vector<std::string> words(argv + 1, argv + argc);
  size_t i = 0;
  if (words.empty() || words[0].rfind("--plugin=", 0) != 0)
    usage("the first argument must be --plugin=PATH");
  if (absl::Status s = d.host.loadPlugin(words[0].substr(9)); !s.ok())
    usage("cannot load the plugin: " + str(s));
  std::string backendName = "host";
  i = 1;
  if (words.size() > 1 && words[1].rfind("--backend=", 0) == 0)
    backendName = words[i++].substr(10);
  if (absl::Status s = d.host.findBackend(backendName, d.backend); !s.ok())
    usage(str(s));
  for (; i < words.size();) {
    const std::string w = words[i++];
    auto rest = [&](size_t n) { return w.substr(n); };
    if (w == "describe") {
      d.describe(0);
    } else if (w.rfind("describe:", 0) == 0) {
      d.describe(int32_t(std::strtol(rest(9).c_str(), nullptr, 10)));
    } else if (w.rfind("options:", 0) == 0) {
      d.options(rest(8));
    } else if (w.rfind("finalize:", 0) == 0) {
      std::vector<std::string> f = split(rest(9), ':');
      if (f.size() != 3)
        usage("finalize wants finalize:FORMAT:FILE:KERNEL");
      std::string loadable;
      d.finalize(f[0], f[1], f[2], loadable);
    } else if (w.rfind("load:", 0) == 0) {
      std::vector<std::string> f = split(rest(5), ':');
      if (f.size() != 2)
        usage("load wants load:FILE:KERNEL");
      d.load(f[0], f[1]);
    } else if (w.rfind("memory:", 0) == 0) {
      std::vector<std::string> f = split(rest(7), ':');
      if (f.size() != 2)
        usage("memory wants memory:DEVICE:SIZE");
      d.memory(int32_t(std::strtol(f[0].c_str(), nullptr, 10)),
               std::strtoull(f[1].c_str(), nullptr, 10));
    } else if (w == "unload") {
      d.unload();
    } else if (w.rfind("--repeat=", 0) == 0) {
      d.repeat =
          unsigned(std::max(1ul, std::strtoul(rest(9).c_str(), nullptr, 10)));
    } else if (w == "--time") {
      d.time = true;
    } else if (w.rfind("--shared=", 0) == 0) {
      d.shared = unsigned(std::strtoul(rest(9).c_str(), nullptr, 10));
    } else if (w.rfind("--flags=", 0) == 0) {
      d.flags = unsigned(std::strtoul(rest(8).c_str(), nullptr, 0));
    } else if (w.rfind("--cluster=", 0) == 0) {
      std::vector<std::string> c = split(rest(10), ',');
      for (size_t k = 0; k < c.size() && k < 3; ++k)
        d.cluster[k] = uint32_t(std::strtoul(c[k].c_str(), nullptr, 10));
    } else if (w.rfind("--concurrent=", 0) == 0) {
      d.concurrent =
          unsigned(std::max(1ul, std::strtoul(rest(13).c_str(), nullptr, 10)));
    } else if (w == "--values") {
      d.values = Driver::Values::Template;
    } else if (w == "--values-untaken") {
      d.values = Driver::Values::Untaken;
    } else if (w.rfind("--values-count=", 0) == 0) {
      d.valuesCount = std::strtol(rest(15).c_str(), nullptr, 10);
    } else if (w.rfind("launch:", 0) == 0) {
      std::vector<std::string> args;
      while (i < words.size() && !isCommand(words[i]))
        args.push_back(words[i++]);
      d.launch(rest(7), args);
    } else {
      usage("unknown command '" + w + "'");
    }
  }
  while (!d.kernels.empty()) {
    d.backend.unload(d.kernels.back().second).IgnoreError();
    d.kernels.pop_back();
  }
  d.host.shutdown();
  d.say("done");
  return 0;
}
