//===- BackendDriver.cpp - what the backend test drivers share ------------===//

#include "BackendDriver.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kjit::driver {

const char *toolName = "kjit-driver";

void usage(const std::string &message) {
  std::fprintf(stderr, "%s: %s\n", toolName, message.c_str());
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

//===----------------------------------------------------------------------===//
// Buffer
//===----------------------------------------------------------------------===//

void Buffer::fill(const std::string &init) {
  for (size_t i = 0; i < count; ++i) {
    double v = init == "iota" ? double(i) : std::strtod(init.c_str(), nullptr);
    set(i, v);
  }
}

void Buffer::set(size_t i, double v) {
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

std::string Buffer::format(size_t i) const {
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

//===----------------------------------------------------------------------===//
// LaunchArgs
//===----------------------------------------------------------------------===//

std::string_view LaunchArgs::keep(std::string s) {
  strings.push_back(std::move(s));
  return strings.back();
}

void LaunchArgs::encode(kjit_arg &arg, std::string_view typeText,
                        const rt::Argument &value) {
  std::optional<rt::SigType> type = rt::parseSigType(typeText);
  if (!type)
    usage("unknown signature type '" + std::string(typeText) + "'");
  absl::Status s = rt::encodeArgument(*type, value, arg);
  if (!s.ok() && error.empty())
    error = "argument " + std::to_string(args.size()) + " ('" +
            std::string(arg.name, arg.name_len) + "'): " + str(s);
}

/// A scalar of `type` written `text`, as a host language would pass it.
static rt::Argument scalar(std::string_view type, const std::string &text) {
  // Integer types are spelled iN and uN; every other scalar is a float.
  bool isFloat =
      !type.empty() && type[0] != '*' && type[0] != 'i' && type[0] != 'u';
  if (isFloat)
    return rt::Argument::fp(std::strtod(text.c_str(), nullptr));
  std::optional<rt::Int128> v = rt::parseInt128(text);
  if (!v)
    usage("cannot parse integer '" + text + "'");
  return rt::Argument::integer(*v);
}

void LaunchArgs::parse(const std::vector<std::string> &words,
                       bool hostBuffers) {
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
    bool isBuffer = f[0] == "buf" || (hostBuffers && f[0] == "hostbuf");
    if (isBuffer && (f.size() == 3 || f.size() == 4)) {
      Buffer b;
      b.type = f[1];
      b.count = std::strtoull(f[2].c_str(), nullptr, 10);
      std::optional<rt::DType> dtype = rt::parseDType(b.type);
      if (!elementSize(b.type) || !dtype)
        usage("unknown buffer type '" + b.type + "'");
      b.storage.assign((b.bytes() + 7) / 8 + 1, 0);
      if (f.size() == 4 && f[3] != "zero")
        b.fill(f[3]);
      b.hostOnly = f[0] == "hostbuf";
      buffers.push_back(std::move(b));
      // A placed buffer's address is set to its device copy's (place()).
      encode(a, setType("*" + f[1]),
             rt::Argument::tensor(
                 reinterpret_cast<uintptr_t>(buffers.back().data()), *dtype));
      bufferArgs.push_back(&a);
    } else if (f[0] == "null" && f.size() == 2) {
      encode(a, setType(f[1]), rt::Argument::none());
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

std::string LaunchArgs::place(const plugin::BackendRef &backend) {
  for (size_t k = 0; k < buffers.size(); ++k) {
    Buffer &b = buffers[k];
    if (b.hostOnly)
      continue;
    size_t bytes = std::max<size_t>(1, b.bytes());
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

std::string LaunchArgs::retrieve(const plugin::BackendRef &backend) {
  std::string errors;
  for (Buffer &b : buffers) {
    if (!b.device)
      continue;
    size_t bytes = std::max<size_t>(1, b.bytes());
    if (absl::Status s = backend.copyToHost(0, b.data(), b.device, bytes);
        !s.ok())
      errors += "copy back error: " + str(s) + "\n";
    if (absl::Status s = backend.deallocate(0, b.device); !s.ok())
      errors += "deallocate error: " + str(s) + "\n";
    b.device = 0;
  }
  return errors;
}

std::string LaunchArgs::dump() const {
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

//===----------------------------------------------------------------------===//
// BackendDriver
//===----------------------------------------------------------------------===//

void BackendDriver::say(const std::string &line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

bool BackendDriver::isCommon(std::string_view word) {
  for (std::string_view c :
       {"describe", "options:", "finalize:", "unload", "--repeat=", "--time",
        "--shared=", "--flags=", "--cluster=", "--values"})
    if (word.substr(0, c.size()) == c)
      return true;
  return false;
}

bool BackendDriver::runCommon(const std::string &w) {
  auto rest = [&](size_t n) { return w.substr(n); };
  auto number = [&](size_t n, int base = 10) {
    return std::strtoul(rest(n).c_str(), nullptr, base);
  };
  if (w == "describe") {
    describe(0);
  } else if (w.rfind("describe:", 0) == 0) {
    describe(int32_t(std::strtol(rest(9).c_str(), nullptr, 10)));
  } else if (w.rfind("options:", 0) == 0) {
    options(rest(8));
  } else if (w.rfind("finalize:", 0) == 0) {
    std::vector<std::string> f = split(rest(9), ':');
    if (f.size() != 3)
      usage("finalize wants finalize:FORMAT:FILE:KERNEL");
    std::string loadable;
    finalize(f[0], f[1], f[2], loadable);
  } else if (w == "unload") {
    unload();
  } else if (w.rfind("--repeat=", 0) == 0) {
    repeat = unsigned(std::max(1ul, number(9)));
  } else if (w == "--time") {
    time = true;
  } else if (w.rfind("--shared=", 0) == 0) {
    shared = unsigned(number(9));
  } else if (w.rfind("--flags=", 0) == 0) {
    flags = unsigned(number(8, 0));
  } else if (w.rfind("--cluster=", 0) == 0) {
    std::vector<std::string> c = split(rest(10), ',');
    for (size_t k = 0; k < c.size() && k < 3; ++k)
      cluster[k] = uint32_t(std::strtoul(c[k].c_str(), nullptr, 10));
  } else if (w == "--values") {
    values = ValuesMode::Template;
  } else if (w == "--values-untaken") {
    values = ValuesMode::Untaken;
  } else if (w.rfind("--values-count=", 0) == 0) {
    valuesCount = std::strtol(rest(15).c_str(), nullptr, 10);
  } else {
    return false;
  }
  return true;
}

void BackendDriver::describe(int32_t device) {
  absl::StatusOr<int32_t> count = backend.deviceCount();
  if (!count.ok())
    return say("device_count error: " + str(count.status()));
  say("device_count " + std::to_string(*count));
  absl::StatusOr<plugin::BackendRef::Description> d = backend.describe(device);
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
      (describeOptions ? " options=" + options : ""));
  absl::StatusOr<std::string> fp = backend.fingerprint(device);
  if (!fp.ok())
    return say("fingerprint error: " + str(fp.status()));
  say("fingerprint " + *fp);
  absl::StatusOr<std::string> again = backend.fingerprint(device);
  say(again.ok() && *again == *fp ? "fingerprint stable"
                                  : "fingerprint CHANGED between calls");
}

void BackendDriver::options(const std::string &list) {
  std::vector<std::string> items;
  if (!list.empty())
    items = split(list, ',');
  std::vector<std::pair<std::string_view, std::string_view>> parsed;
  std::deque<std::string> keep;
  for (const std::string &item : items) {
    size_t eq = item.find('=');
    keep.push_back(item.substr(0, eq));
    std::string_view n = keep.back();
    keep.push_back(eq == std::string::npos ? "" : item.substr(eq + 1));
    parsed.emplace_back(n, keep.back());
  }
  absl::StatusOr<void *> handle = backend.parseOptions(parsed);
  if (!handle.ok())
    return say("parse_options error: " + str(handle.status()));
  backend.destroyOptions(*handle);
  say("parse_options ok");
}

bool BackendDriver::finalize(const std::string &format, const std::string &file,
                             const std::string &kernel, std::string &loadable) {
  std::string bytes = readFile(file), info;
  absl::StatusOr<std::string> out = backend.finalize(
      /*device=*/0, format, bytes, kernel, /*options=*/nullptr, &info);
  if (!out.ok()) {
    say("finalize error: " + str(out.status()));
    return false;
  }
  loadable = std::move(*out);
  say("finalize ok: " + std::to_string(loadable.size()) + " bytes" +
      describeLoadable(bytes, loadable));
  if (!info.empty())
    say("finalize info: " + info);
  return true;
}

void BackendDriver::load(const std::string &format, const std::string &file,
                         const std::string &kernel) {
  std::string loadable;
  if (!finalize(format, file, kernel, loadable))
    return;
  absl::StatusOr<void *> handle = backend.load(/*device=*/0, loadable, kernel);
  if (!handle.ok())
    return say("load error: " + str(handle.status()));
  kernels.emplace_back(kernel, *handle);
  loadables.push_back(std::move(loadable));
  say("load ok: " + kernel);
}

void BackendDriver::unload() {
  if (kernels.empty())
    usage("unload without a loaded kernel");
  if (absl::Status s = backend.unload(kernels.back().second); !s.ok())
    say("unload error: " + str(s));
  else
    say("unload ok: " + kernels.back().first);
  kernels.pop_back();
  loadables.pop_back();
}

void BackendDriver::finish() {
  while (!kernels.empty()) {
    if (absl::Status s = backend.unload(kernels.back().second); !s.ok())
      say("unload error: " + str(s));
    kernels.pop_back();
  }
  host.shutdown();
  say("done");
}

kjit_backend_launch_args BackendDriver::launchArgs(const std::string &spec) {
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
  for (int i = 0; i < 3; ++i)
    launch.cluster[i] = cluster[i];
  return launch;
}

bool BackendDriver::passValues(kjit_backend_launch_args &launch,
                               const LaunchArgs &args, Values &passed,
                               std::string &said) {
  launch.num_args = args.args.size();
  launch.args = args.args.data();
  if (values == ValuesMode::None)
    return true;
  for (const kjit_arg *a : args.args)
    passed.bits.push_back(a->bits);
  if (valuesCount >= 0)
    passed.bits.resize(size_t(valuesCount));
  if (values == ValuesMode::Template) {
    absl::StatusOr<plugin::BackendRef::LoadedKernel> loaded =
        backend.load(0, loadables.back(), kernels.back().first, args.args);
    if (!loaded.ok()) {
      said += "template load error: " + str(loaded.status());
      return false;
    }
    passed.templated = loaded->kernel;
    launch.kernel = passed.templated;
    said += loaded->takesValues ? "template taken\n" : "template not taken\n";
    if (!loaded->takesValues)
      return true;
  }
  // Values alone, as the runtime passes them to a kernel whose load took
  // its template.
  launch.values = passed.bits.data();
  launch.num_args = passed.bits.size();
  launch.args = nullptr;
  return true;
}

std::string BackendDriver::dropValues(Values &passed) {
  if (!passed.templated)
    return "";
  absl::Status s = backend.unload(passed.templated);
  passed.templated = nullptr;
  return s.ok() ? "" : "unload error: " + str(s) + "\n";
}

absl::Status BackendDriver::launchRepeated(kjit_backend_launch_args &launch,
                                           double &us) {
  absl::Status status;
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < repeat && status.ok(); ++i)
    status = backend.launchPrepared(launch);
  us = std::chrono::duration<double, std::micro>(
           std::chrono::steady_clock::now() - start)
           .count() /
       repeat;
  return status;
}

std::string BackendDriver::timeLine(const char *what, double us) const {
  if (!time)
    return "";
  char text[96];
  std::snprintf(text, sizeof text, "time: %.3f us per %s (%u launches)", us,
                what, repeat);
  return text;
}

void BackendDriver::resetSettings() {
  values = ValuesMode::None;
  valuesCount = -1;
  repeat = 1;
  shared = flags = 0;
  cluster = {0, 0, 0};
  time = false;
}

} // namespace kjit::driver
