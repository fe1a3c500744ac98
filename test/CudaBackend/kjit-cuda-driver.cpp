//===- kjit-cuda-driver.cpp - drives the cuda backend through the host ---===//
//
// A test tool: loads libkjit-cuda.so through kjit::plugin::PluginHost and
// drives every entry of its backend from the command line: device count,
// describe (with the compile options) and fingerprint, finalize (PTX through
// the finalizers, or a cubin as it is), load, launch with arguments whose
// buffers live in device memory from the backend's allocate (filled and read
// back with copy), synchronize, unload. With the fake driver and toolkit of
// test/CudaBackend/Inputs it runs without a GPU; on a GPU machine it runs
// the same commands on the real driver. Driver lines go to stdout, flushed
// after each; the host's log (and the fake driver's) goes to stderr.
//
// Usage: kjit-cuda-driver --plugin=PATH [--host-plugin=PATH] COMMAND...
//   describe[:DEVICE]         device_count, describe, fingerprint (twice)
//   options:N=V[,N=V...]      parse_options (then destroy_options)
//   finalize:FORMAT:FILE:K    finalize FILE as FORMAT (ptx, cubin) for K
//   load:FORMAT:FILE:K        finalize, then load kernel K
//   unload                    unload the kernel loaded last
//   launch:GX[,GY,GZ]:WARPS ARG...   launch the kernel loaded last, then
//                             synchronize, copy every buffer back and print
//                             it ("bufK = ...")
//   --repeat=N --shared=BYTES --flags=BITS --cluster=X[,Y,Z] --stream=S
//                             settings of the next launch; --time prints
//                             the time per launch call (enqueue only);
//                             --threads=K runs it from K new threads at once,
//                             each with its own buffers (results must agree)
//   --values                  the next launch as the runtime makes it (ABI
//                             1.4): the kernel loaded last is loaded again
//                             with the launch's arguments as its template;
//                             when the backend takes it ("template taken"),
//                             the launch passes values alone
//   --values-count=N          with --values, pass N values instead
//   --values-untaken          pass values to the kernel loaded last, whose
//                             load took no template
//   sync[:STREAM]             synchronize device 0's stream
//   alloc:BYTES               allocate and free on device 0
//   host                      the host backend (--host-plugin) in the same
//                             process: describe and a copy round trip
//   async                     how many asynchronous errors the host counted
// ARG as in kjit-host-driver (buf:TYPE:COUNT[:INIT], TYPE:VALUE, null:TYPE,
// old:TYPE:VALUE, raw:TYPE:DTYPE:FLAGS:SIZE:BITS, constexpr:VALUE), plus
//   hostbuf:TYPE:COUNT[:INIT] a buffer left in host memory
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
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace kjit::plugin;

namespace {

[[noreturn]] void usage(const std::string &message) {
  std::fprintf(stderr, "kjit-cuda-driver: %s\n", message.c_str());
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
  /// hostbuf: stays in host memory (for the backend's refusal).
  bool hostOnly = false;
  /// The device copy (0 for hostOnly).
  uint64_t device = 0;
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
  /// The kjit_arg of each buffer, in buffer order.
  std::vector<kjit_arg *> bufferArgs;
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
      if ((f[0] == "buf" || f[0] == "hostbuf") &&
          (f.size() == 3 || f.size() == 4)) {
        Buffer b;
        b.type = f[1];
        b.count = std::strtoull(f[2].c_str(), nullptr, 10);
        std::optional<kjit::rt::DType> dtype = kjit::rt::parseDType(b.type);
        if (!elementSize(b.type) || !dtype)
          usage("unknown buffer type '" + b.type + "'");
        b.storage.assign((b.count * elementSize(b.type) + 7) / 8 + 1, 0);
        if (f.size() == 4 && f[3] != "zero")
          b.fill(f[3]);
        b.hostOnly = f[0] == "hostbuf";
        buffers.push_back(std::move(b));
        // The address is set once the device copy exists (place()).
        encode(a, setType("*" + f[1]),
               kjit::rt::Argument::tensor(
                   reinterpret_cast<uintptr_t>(buffers.back().data()), *dtype));
        bufferArgs.push_back(&a);
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

  /// Allocates the device copy of every buffer and points its argument at
  /// it; an error line when the backend refuses.
  std::string place(const BackendRef &backend) {
    for (size_t k = 0; k < buffers.size(); ++k) {
      Buffer &b = buffers[k];
      if (b.hostOnly)
        continue;
      size_t bytes = std::max<size_t>(1, b.count * elementSize(b.type));
      absl::StatusOr<uint64_t> address = backend.allocate(0, bytes);
      if (!address.ok())
        return "allocate error: " + str(address.status());
      b.device = *address;
      if (absl::Status s = backend.copyToDevice(0, b.device, b.data(), bytes);
          !s.ok())
        return "copy error: " + str(s);
      bufferArgs[k]->bits = b.device;
      bufferArgs[k]->uint_value = b.device;
    }
    return "";
  }
  /// Copies every buffer back and frees the device copies.
  std::string retrieve(const BackendRef &backend) {
    std::string errors;
    for (Buffer &b : buffers) {
      if (!b.device)
        continue;
      size_t bytes = std::max<size_t>(1, b.count * elementSize(b.type));
      if (absl::Status s = backend.copyToHost(0, b.data(), b.device, bytes);
          !s.ok())
        errors += "copy back error: " + str(s) + "\n";
      if (absl::Status s = backend.deallocate(0, b.device); !s.ok())
        errors += "deallocate error: " + str(s) + "\n";
      b.device = 0;
    }
    return errors;
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
  BackendRef backend, hostBackend;
  bool haveHost = false;
  std::vector<std::pair<std::string, void *>> kernels; // loaded, last current
  std::vector<std::string> loadables;                  // of each kernel
  unsigned repeat = 1, shared = 0, flags = 0, threads = 1;
  /// The next launch's values (ABI 1.4): none, through a template load,
  /// or given to a kernel loaded without one.
  enum class Values { None, Template, Untaken } values = Values::None;
  long valuesCount = -1; // -1: one per argument
  uint64_t stream = 0;
  bool time = false;
  std::array<uint32_t, 3> cluster = {0, 0, 0};

  void say(const std::string &line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  void describe(int32_t device) {
    absl::StatusOr<int32_t> count = backend.deviceCount();
    if (!count.ok())
      return say("device_count error: " + str(count.status()));
    say("device_count " + std::to_string(*count));
    absl::StatusOr<BackendRef::Description> d = backend.describe(device);
    if (!d.ok())
      return say("describe error: " + str(d.status()));
    std::string formats, uuid, options;
    for (const std::string &f : d->formats)
      formats += (formats.empty() ? "" : ",") + f;
    for (uint8_t b : d->uuid) {
      char two[3];
      std::snprintf(two, sizeof two, "%02x", b);
      uuid += two;
    }
    for (const auto &[name, value] : d->compileOptions)
      options += (options.empty() ? "" : ",") + name + "=" + value;
    say("describe target=" + d->target + " arch=" + d->arch +
        " warp=" + std::to_string(d->warpSize) + " formats=" + formats +
        " sms=" + std::to_string(d->multiprocessorCount) +
        " threads=" + std::to_string(d->maxThreadsPerBlock) +
        " smem=" + std::to_string(d->maxSharedMemoryPerBlock) + " uuid=" +
        (uuid.find_first_not_of('0') == std::string::npos ? std::string("none")
                                                          : uuid) +
        " options=" + options);
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
    // The fake finalizers name themselves in the first line after the
    // header; a real cubin is binary.
    std::string head;
    if (loadable.size() > 8 && loadable.compare(8, 11, "fake-cubin ") == 0)
      head = ": " + loadable.substr(8, loadable.find('\n', 8) - 8);
    say("finalize ok: " + std::to_string(loadable.size()) + " bytes" + head);
    return true;
  }

  void load(const std::string &format, const std::string &file,
            const std::string &kernel) {
    std::string loadable;
    if (!finalize(format, file, kernel, loadable))
      return;
    absl::StatusOr<void *> handle =
        backend.load(/*device=*/0, loadable, kernel);
    if (!handle.ok())
      return say("load error: " + str(handle.status()));
    kernels.emplace_back(kernel, *handle);
    loadables.push_back(loadable);
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

  void launch(const std::string &spec, const std::vector<std::string> &words) {
    if (kernels.empty())
      usage("launch without a loaded kernel");
    std::vector<std::string> f = split(spec, ':');
    if (f.size() != 2)
      usage("launch wants launch:GRID:WARPS");
    std::vector<std::string> g = split(f[0], ',');
    kjit_backend_launch_args launch;
    std::memset(&launch, 0, sizeof launch);
    launch.struct_size = sizeof launch;
    launch.kernel = kernels.back().second;
    for (int i = 0; i < 3; ++i)
      launch.grid[i] = 1;
    for (size_t i = 0; i < g.size() && i < 3; ++i)
      launch.grid[i] = uint32_t(std::strtoul(g[i].c_str(), nullptr, 10));
    launch.num_warps = uint32_t(std::strtoul(f[1].c_str(), nullptr, 10));
    launch.shared_memory_bytes = shared;
    launch.flags = flags;
    launch.stream = stream;
    for (int i = 0; i < 3; ++i)
      launch.cluster[i] = cluster[i];
    if (threads > 1)
      return launchFromThreads(launch, words);
    LaunchArgs args;
    args.parse(words);
    std::string line;
    if (!args.error.empty()) {
      line = "argument error: " + args.error;
    } else if (std::string placed = args.place(backend); !placed.empty()) {
      line = placed;
    } else {
      launch.num_args = args.args.size();
      launch.args = args.args.data();
      // Values alone, as the runtime passes them to a kernel whose load
      // took its template.
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
            backend.load(0, loadables.back(), kernels.back().first, args.args);
        if (!loaded.ok()) {
          say("template load error: " + str(loaded.status()));
        } else {
          templated = loaded->kernel;
          launch.kernel = templated;
          say(loaded->takesValues ? "template taken" : "template not taken");
          if (loaded->takesValues) {
            launch.values = bits.data();
            launch.num_args = bits.size();
            launch.args = nullptr;
          }
        }
      } else if (values == Values::Untaken) {
        launch.values = bits.data();
        launch.num_args = bits.size();
        launch.args = nullptr;
      }
      absl::Status status;
      auto start = std::chrono::steady_clock::now();
      for (unsigned i = 0; i < repeat && status.ok(); ++i)
        status = backend.launchPrepared(launch);
      double us = std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - start)
                      .count() /
                  repeat;
      line = status.ok() ? "launch ok" : "launch error: " + str(status);
      if (time) {
        char text[96];
        std::snprintf(text, sizeof text,
                      "\ntime: %.3f us per launch call (%u launches)", us,
                      repeat);
        line += text;
      }
      if (status.ok())
        if (absl::Status s = backend.synchronize(0, stream); !s.ok())
          line += "\nsynchronize error: " + str(s);
      if (templated)
        if (absl::Status s = backend.unload(templated); !s.ok())
          line += "\nunload error: " + str(s);
    }
    say(line);
    std::string back = args.retrieve(backend);
    std::fputs(back.c_str(), stdout);
    std::fputs(args.dump().c_str(), stdout);
    std::fflush(stdout);
    repeat = 1;
    time = false;
    shared = flags = 0;
    stream = 0;
    cluster = {0, 0, 0};
    values = Values::None;
    valuesCount = -1;
  }

  /// The launch from `threads` new threads at once, each with buffers of
  /// its own, `repeat` times each; every thread's results must agree.
  void launchFromThreads(kjit_backend_launch_args launch,
                         const std::vector<std::string> &words) {
    std::vector<std::unique_ptr<LaunchArgs>> all;
    std::vector<std::string> lines(threads);
    for (unsigned t = 0; t < threads; ++t) {
      all.push_back(std::make_unique<LaunchArgs>());
      all.back()->parse(words);
      if (std::string placed = all.back()->place(backend); !placed.empty())
        lines[t] = placed;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t, launch]() mutable {
        if (!lines[t].empty())
          return;
        launch.num_args = all[t]->args.size();
        launch.args = all[t]->args.data();
        absl::Status status;
        for (unsigned i = 0; i < repeat && status.ok(); ++i)
          status = backend.launchPrepared(launch);
        lines[t] = status.ok() ? "launch ok" : "launch error: " + str(status);
      });
    for (std::thread &t : pool)
      t.join();
    if (absl::Status s = backend.synchronize(0, launch.stream); !s.ok())
      say("synchronize error: " + str(s));
    std::string first;
    for (unsigned t = 0; t < threads; ++t) {
      std::string back = all[t]->retrieve(backend);
      std::string result = lines[t] + "\n" + back + all[t]->dump();
      if (t == 0)
        first = result;
      else if (result != first)
        say("thread " + std::to_string(t) + " disagrees: " + result);
    }
    say(std::to_string(threads) + " threads: " + first);
    repeat = threads = 1;
    time = false;
    shared = flags = 0;
    stream = 0;
    cluster = {0, 0, 0};
  }

  void sync(uint64_t s) {
    absl::Status status = backend.synchronize(0, s);
    say(status.ok() ? "synchronize ok" : "synchronize error: " + str(status));
  }

  void alloc(uint64_t bytes) {
    absl::StatusOr<uint64_t> address = backend.allocate(0, bytes);
    if (!address.ok())
      return say("allocate error: " + str(address.status()));
    absl::Status s = backend.deallocate(0, *address);
    say(std::string("allocate ok, aligned to 256: ") +
        (*address % 256 == 0 ? "yes" : "no") +
        (s.ok() ? ", freed" : ", deallocate error: " + str(s)));
  }

  void hostCheck() {
    if (!haveHost)
      usage("host without --host-plugin");
    absl::StatusOr<BackendRef::Description> d = hostBackend.describe(0);
    if (!d.ok())
      return say("host describe error: " + str(d.status()));
    std::string in = "round trip", out(in.size(), ' ');
    absl::StatusOr<uint64_t> a = hostBackend.allocate(0, in.size());
    if (!a.ok())
      return say("host allocate error: " + str(a.status()));
    absl::Status s1 = hostBackend.copyToDevice(0, *a, in.data(), in.size());
    absl::Status s2 = hostBackend.copyToHost(0, out.data(), *a, out.size());
    absl::Status s3 = hostBackend.deallocate(0, *a);
    say("host backend: target=" + d->target + " arch=" + d->arch +
        " copy=" + (s1.ok() && s2.ok() && s3.ok() ? out : "failed"));
  }
};

bool isCommand(std::string_view w) {
  for (std::string_view c : {"describe",
                             "options:",
                             "finalize:",
                             "load:",
                             "unload",
                             "launch:",
                             "--repeat=",
                             "--time",
                             "--threads=",
                             "--shared=",
                             "--flags=",
                             "--values",
                             "--values-untaken",
                             "--values-count=",
                             "--cluster=",
                             "--stream=",
                             "sync",
                             "alloc:",
                             "host",
                             "async"})
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
  if (absl::Status s = d.host.findBackend("cuda", d.backend); !s.ok())
    usage(str(s));
  i = 1;
  if (i < words.size() && words[i].rfind("--host-plugin=", 0) == 0) {
    if (absl::Status s = d.host.loadPlugin(words[i].substr(14)); !s.ok())
      usage("cannot load the host plugin: " + str(s));
    if (absl::Status s = d.host.findBackend("host", d.hostBackend); !s.ok())
      usage(str(s));
    d.haveHost = true;
    ++i;
  }
  while (i < words.size()) {
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
      if (f.size() != 3)
        usage("load wants load:FORMAT:FILE:KERNEL");
      d.load(f[0], f[1], f[2]);
    } else if (w == "unload") {
      d.unload();
    } else if (w.rfind("--repeat=", 0) == 0) {
      d.repeat =
          unsigned(std::max(1ul, std::strtoul(rest(9).c_str(), nullptr, 10)));
    } else if (w.rfind("--threads=", 0) == 0) {
      d.threads =
          unsigned(std::max(1ul, std::strtoul(rest(10).c_str(), nullptr, 10)));
    } else if (w == "--time") {
      d.time = true;
    } else if (w == "--values") {
      d.values = Driver::Values::Template;
    } else if (w == "--values-untaken") {
      d.values = Driver::Values::Untaken;
    } else if (w.rfind("--values-count=", 0) == 0) {
      d.valuesCount = std::strtol(rest(15).c_str(), nullptr, 10);
    } else if (w.rfind("--shared=", 0) == 0) {
      d.shared = unsigned(std::strtoul(rest(9).c_str(), nullptr, 10));
    } else if (w.rfind("--flags=", 0) == 0) {
      d.flags = unsigned(std::strtoul(rest(8).c_str(), nullptr, 0));
    } else if (w.rfind("--stream=", 0) == 0) {
      d.stream = std::strtoull(rest(9).c_str(), nullptr, 0);
    } else if (w.rfind("--cluster=", 0) == 0) {
      std::vector<std::string> c = split(rest(10), ',');
      for (size_t k = 0; k < c.size() && k < 3; ++k)
        d.cluster[k] = uint32_t(std::strtoul(c[k].c_str(), nullptr, 10));
    } else if (w.rfind("launch:", 0) == 0) {
      std::vector<std::string> args;
      while (i < words.size() && !isCommand(words[i]))
        args.push_back(words[i++]);
      d.launch(rest(7), args);
    } else if (w == "sync") {
      d.sync(0);
    } else if (w.rfind("sync:", 0) == 0) {
      d.sync(std::strtoull(rest(5).c_str(), nullptr, 0));
    } else if (w.rfind("alloc:", 0) == 0) {
      d.alloc(std::strtoull(rest(6).c_str(), nullptr, 0));
    } else if (w == "host") {
      d.hostCheck();
    } else if (w == "async") {
      d.say("async errors: " + std::to_string(d.host.asyncErrorCount()));
    } else {
      usage("unknown command '" + w + "'");
    }
  }
  while (!d.kernels.empty()) {
    if (absl::Status s = d.backend.unload(d.kernels.back().second); !s.ok())
      d.say("unload error: " + str(s));
    d.kernels.pop_back();
  }
  d.host.shutdown();
  d.say("done");
  return 0;
}
