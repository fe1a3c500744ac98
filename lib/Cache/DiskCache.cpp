//===- DiskCache.cpp - the persistent cache of kernels and manifests ------===//
//
// Every path is resolved relative to the cache directory's descriptor, with
// O_NOFOLLOW on each component kjit creates, so that nothing inside the
// cache can redirect a write (docs/DiskCache.md "Permissions").
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/DiskCache.h"

#include "kjit/Support/StrCat.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace kjit::cache {

namespace {

constexpr const char *kTempPrefix = ".tmp.";
constexpr const char *kStatsMagic = "kjit-cache-stats 2";
/// CACHEDIR.TAG as kjit writes it: the signature line of the Cache
/// Directory Tagging Specification (bford.info/cachedir), which backup
/// tools look for, then kjit's own line. A tag that starts with both lines
/// marks the directory as kjit's cache; nothing else does.
constexpr std::string_view kCacheTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This directory is kjit's cache of compiled kernels; see "
    "`kjit-cache --help`.\n";

enum WarnBit : int {
  kWarnWrite = 1,
  kWarnStats = 2,
  kWarnLockFile = 4,
  kWarnCleanupLock = 8,
  kWarnShard = 16,
};

int64_t nowNanos() {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

int64_t mtimeNanos(const struct stat &st) {
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::string errnoText(int error) { return std::strerror(error); }

/// A name no entry can have (entries are 64 hex digits): ".tmp.PID.RANDOM",
/// PID in decimal and RANDOM in 1 to 16 lowercase hex digits.
std::string temporaryName() {
  uint64_t random = 0;
  if (getrandom(&random, sizeof random, GRND_NONBLOCK) != sizeof random) {
    static std::atomic<uint64_t> counter{0};
    random = uint64_t(nowNanos()) ^ (counter.fetch_add(1) << 48);
  }
  return strCat(kTempPrefix, getpid(), ".", absl::Hex(random));
}

bool writeAll(int fd, std::string_view bytes, int &error) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      return false;
    }
    bytes.remove_prefix(size_t(n));
  }
  return true;
}

/// Up to `size` bytes from the start of `fd`; fewer when the file is
/// shorter (the caller compares).
std::string readAll(int fd, size_t size) {
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, bytes.data() + done, size - done, off_t(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += size_t(n);
  }
  bytes.resize(done);
  return bytes;
}

/// Takes an flock, polling until `timeout` (flock itself cannot time out).
/// Returns 0, or the errno that stopped it (EWOULDBLOCK: timed out).
int lockWithTimeout(int fd, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds *waited = nullptr,
                    int operation = LOCK_EX) {
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(500);
  for (;;) {
    if (flock(fd, operation | LOCK_NB) == 0) {
      if (waited)
        *waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
      return 0;
    }
    if (errno == EINTR)
      continue;
    if (errno != EWOULDBLOCK)
      return errno;
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed >= timeout) {
      if (waited)
        *waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(elapsed);
      return EWOULDBLOCK;
    }
    auto left = timeout - elapsed;
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
        pause, std::chrono::duration_cast<std::chrono::nanoseconds>(left)));
    pause = std::min<std::chrono::microseconds>(
        pause * 2, std::chrono::microseconds(20000));
  }
}

/// Makes `path` and its missing parents with mode 0700.
int makeDirectories(const std::string &path) {
  for (size_t slash = 0; slash != std::string::npos;) {
    slash = path.find('/', slash + 1);
    std::string prefix = path.substr(0, slash);
    if (prefix.empty() || prefix == "/")
      continue;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return errno;
  }
  return 0;
}

/// A private subdirectory of `parent`, made when missing, never a link.
int openSubdirectory(int parent, const char *name, bool create) {
  if (create && mkdirat(parent, name, 0700) != 0 && errno != EEXIST)
    return -1;
  return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/// Why a directory may not hold a cache, or empty when it may.
std::string insecure(const std::string &path, const struct stat &st) {
  if (!S_ISDIR(st.st_mode))
    return strCat("'", path, "' is not a directory");
  if (st.st_uid != geteuid())
    return strCat("'", path, "' belongs to uid ", st.st_uid,
                  ", not to this user (uid ", geteuid(),
                  "), who could not trust the kernels in it");
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "0%o", unsigned(st.st_mode & 07777));
    return strCat("'", path, "' can be written by others (mode ", mode,
                  "), who could plant kernels in it; `chmod go-w` it, or "
                  "point KJIT_CACHE_DIR elsewhere");
  }
  return std::string();
}

/// The names in a directory (without . and ..), or none when it cannot be
/// read.
std::vector<std::string> listDirectory(int dir) {
  std::vector<std::string> names;
  int copy = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0)
    return names;
  DIR *stream = fdopendir(copy);
  if (!stream) {
    ::close(copy);
    return names;
  }
  while (struct dirent *entry = readdir(stream)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..")
      names.emplace_back(name);
  }
  closedir(stream);
  return names;
}

bool isShardName(std::string_view name) {
  return name.size() == 2 && isValidKey(strCat(name, std::string(62, '0')));
}

/// The name of an entry of the shard `shard`: its key, which starts with
/// the shard's two digits.
bool isEntryName(std::string_view shard, std::string_view name) {
  return isValidKey(name) && name.substr(0, 2) == shard;
}

/// Exactly the names temporaryName() makes, so that the sweeps of killed
/// writers' files never take another program's ".tmp.something".
bool isTemporaryName(std::string_view name) {
  if (name.rfind(kTempPrefix, 0) != 0)
    return false;
  name.remove_prefix(std::string_view(kTempPrefix).size());
  size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 10)
    return false;
  std::string_view pid = name.substr(0, dot), random = name.substr(dot + 1);
  if (random.empty() || random.size() > 16)
    return false;
  for (char c : pid)
    if (c < '0' || c > '9')
      return false;
  for (char c : random)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

/// Whether a directory has nothing in it but "." and ".."; false when it
/// cannot be read.
bool isEmptyDirectory(int dir) {
  int copy = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0)
    return false;
  DIR *stream = fdopendir(copy);
  if (!stream) {
    ::close(copy);
    return false;
  }
  bool empty = true;
  errno = 0;
  while (struct dirent *entry = readdir(stream)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  if (errno != 0)
    empty = false;
  closedir(stream);
  return empty;
}

/// What DIR/CACHEDIR.TAG says about the directory.
enum class Tag {
  Kjit,    // kjit's tag: the directory is kjit's cache
  Absent,  // no tag
  Partial, // a prefix of kjit's tag: another process is writing it
  Other,   // another program's tag, or not a regular file
};

Tag readTag(int root) {
  int fd = openat(root, "CACHEDIR.TAG",
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return errno == ENOENT ? Tag::Absent : Tag::Other;
  struct stat st;
  Tag tag = Tag::Other;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::string text = readAll(fd, kCacheTag.size());
    if (text == kCacheTag)
      tag = Tag::Kjit;
    else if (kCacheTag.substr(0, text.size()) == text)
      tag = Tag::Partial;
  }
  ::close(fd);
  return tag;
}

/// Writes kjit's CACHEDIR.TAG, never over an existing file: 0, or the errno
/// that stopped it (EEXIST: another process wrote one first).
int writeTag(int root) {
  int fd = openat(root, "CACHEDIR.TAG",
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno;
  int error = 0;
  bool ok = writeAll(fd, kCacheTag, error);
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) // ours, and incomplete: a later process would refuse the directory
    (void)unlinkat(root, "CACHEDIR.TAG", 0);
  return ok ? 0 : error;
}

/// Makes sure the directory `root` (at `path`) is kjit's cache before
/// anything is written in it: one already marked by kjit's CACHEDIR.TAG,
/// or, with `claim`, an empty one, which gets the tag first (a directory
/// kjit has just made is empty). Anything else is someone else's directory
/// (a mistyped KJIT_CACHE_DIR, a home, another program's cache): refused,
/// so that kjit neither changes it nor marks it for backup tools to skip.
/// NotFound: an empty directory, not claimed.
absl::Status claimDirectory(int root, const std::string &path, bool claim) {
  // Another process may be writing the tag: it takes microseconds.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    Tag tag = readTag(root);
    if (tag == Tag::Kjit)
      return absl::OkStatus();
    if (tag == Tag::Partial && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (tag != Tag::Absent)
      return absl::FailedPreconditionError(strCat(
          "'", path,
          "' is not a kjit cache: its CACHEDIR.TAG is not kjit's (another "
          "program's cache?), so kjit writes nothing there; use a new or "
          "empty directory"));
    if (!isEmptyDirectory(root)) {
      // Another process may have written the tag since it was read: the
      // directory is then being claimed, not someone else's.
      if (readTag(root) != Tag::Absent &&
          std::chrono::steady_clock::now() < deadline)
        continue;
      return absl::FailedPreconditionError(strCat(
          "'", path,
          "' is not a kjit cache: it holds other files and no CACHEDIR.TAG "
          "of kjit's, so kjit writes nothing there; use a new or empty "
          "directory"));
    }
    if (!claim)
      return absl::NotFoundError(strCat("'", path, "' holds no cache"));
    int error = writeTag(root);
    if (error == 0)
      return absl::OkStatus();
    if (error != EEXIST)
      return absl::FailedPreconditionError(
          strCat("cannot mark '", path, "' as kjit's cache (", path,
                 "/CACHEDIR.TAG): ", errnoText(error)));
  }
}

/// FNV-1a, the stats file's own check (a torn or edited file is noticed).
uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text)
    hash = (hash ^ uint8_t(c)) * 0x100000001b3ull;
  return hash;
}

/// The stats file: one "name value" line per counter, values in 20 digits so
/// that the file never changes size (it is rewritten in place), then
/// "check" and the FNV-1a of the lines before it.
std::string printStats(const Stats &stats) {
  std::string text = strCat(kStatsMagic, "\n");
  auto line = [&](std::string_view name, uint64_t value) {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%020llu",
                  static_cast<unsigned long long>(value));
    strAppend(&text, name, " ", digits, "\n");
  };
  for (size_t i = 0; i < kCounterCount; ++i)
    line(counterName(Counter(i)), stats.counters[i]);
  line("size_known", stats.sizeKnown ? 1 : 0);
  line("size_estimate", stats.sizeEstimate);
  char check[32];
  std::snprintf(check, sizeof check, "%016llx",
                static_cast<unsigned long long>(fnv1a(text)));
  strAppend(&text, "check ", check, "\n");
  return text;
}

/// Parses DIR/stats; false when it is not a valid stats file.
bool parseStats(std::string_view text, Stats &stats) {
  size_t checkAt = text.rfind("check ");
  if (checkAt == std::string_view::npos || text.size() != checkAt + 23 ||
      text.back() != '\n')
    return false;
  char check[32];
  std::snprintf(
      check, sizeof check, "%016llx",
      static_cast<unsigned long long>(fnv1a(text.substr(0, checkAt))));
  if (text.substr(checkAt + 6, 16) != check)
    return false;
  text = text.substr(0, checkAt);
  size_t eol = text.find('\n');
  if (eol == std::string_view::npos || text.substr(0, eol) != kStatsMagic)
    return false;
  text.remove_prefix(eol + 1);
  while (!text.empty()) {
    eol = text.find('\n');
    if (eol == std::string_view::npos)
      return false;
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol + 1);
    size_t space = line.find(' ');
    if (space == std::string_view::npos)
      return false;
    std::string_view name = line.substr(0, space),
                     digits = line.substr(space + 1);
    if (digits.empty() || digits.size() > 20)
      return false;
    uint64_t value = 0;
    for (char c : digits) {
      if (c < '0' || c > '9')
        return false;
      value = value * 10 + uint64_t(c - '0');
    }
    if (name == "size_known")
      stats.sizeKnown = value != 0;
    else if (name == "size_estimate")
      stats.sizeEstimate = value;
    for (size_t i = 0; i < kCounterCount; ++i)
      if (name == counterName(Counter(i)))
        stats.counters[i] = value;
    // Unknown names (a newer kjit's counters) are dropped.
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Small public helpers
//===----------------------------------------------------------------------===//

const char *counterName(Counter counter) {
  switch (counter) {
  case Counter::ArtifactHits:
    return "artifact_hits";
  case Counter::ArtifactMisses:
    return "artifact_misses";
  case Counter::ManifestHits:
    return "manifest_hits";
  case Counter::ManifestMisses:
    return "manifest_misses";
  case Counter::Compiles:
    return "compiles";
  case Counter::Corrupt:
    return "corrupt";
  case Counter::Evictions:
    return "evictions";
  case Counter::WriteErrors:
    return "write_errors";
  case Counter::LockTimeouts:
    return "lock_timeouts";
  case Counter::BytesWritten:
    return "bytes_written";
  case Counter::BytesRead:
    return "bytes_read";
  case Counter::RemoteHits:
    return "remote_hits";
  case Counter::RemoteMisses:
    return "remote_misses";
  case Counter::RemoteSkipped:
    return "remote_skipped";
  case Counter::RemoteErrors:
    return "remote_errors";
  case Counter::RemoteTimeouts:
    return "remote_timeouts";
  case Counter::RemoteVerifyFailures:
    return "remote_verify_failures";
  case Counter::RemotePuts:
    return "remote_puts";
  case Counter::RemoteDropped:
    return "remote_dropped";
  case Counter::RemoteBytesRead:
    return "remote_bytes_read";
  case Counter::RemoteBytesWritten:
    return "remote_bytes_written";
  case Counter::Count:
    break;
  }
  return "unknown";
}

std::optional<uint64_t> parseSize(std::string_view text) {
  size_t i = 0;
  uint64_t whole = 0;
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return std::nullopt;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole > (UINT64_MAX - 9) / 10)
      return std::nullopt;
    whole = whole * 10 + uint64_t(text[i++] - '0');
  }
  // One optional fraction ("1.5G").
  double fraction = 0, scale = 0.1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i == text.size() || text[i] < '0' || text[i] > '9')
      return std::nullopt;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      fraction += scale * (text[i++] - '0');
      scale /= 10;
    }
  }
  std::string unit;
  for (; i < text.size(); ++i)
    unit += char(std::tolower(static_cast<unsigned char>(text[i])));
  uint64_t multiplier;
  if (unit.empty() || unit == "b")
    multiplier = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    multiplier = uint64_t(1) << 10;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    multiplier = uint64_t(1) << 20;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    multiplier = uint64_t(1) << 30;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    multiplier = uint64_t(1) << 40;
  else
    return std::nullopt;
  if (whole > UINT64_MAX / multiplier - 1)
    return std::nullopt;
  return whole * multiplier + uint64_t(fraction * double(multiplier));
}

std::string formatSize(uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return strCat(bytes, " B");
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text) {
  size_t i = 0;
  uint64_t value = 0;
  if (text.empty())
    return std::nullopt;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > 1000000000)
      return std::nullopt;
    value = value * 10 + uint64_t(text[i++] - '0');
  }
  if (i == 0)
    return std::nullopt;
  std::string_view unit = text.substr(i);
  if (unit == "ms")
    return std::chrono::milliseconds(value);
  if (unit.empty() || unit == "s")
    return std::chrono::milliseconds(value * 1000);
  if (unit == "m" || unit == "min")
    return std::chrono::milliseconds(value * 60000);
  if (unit == "h")
    return std::chrono::milliseconds(value * 3600000);
  if (unit == "d")
    return std::chrono::milliseconds(value * 86400000);
  return std::nullopt;
}

std::string defaultDirectory() {
  // XDG: a relative XDG_CACHE_HOME is invalid and ignored.
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
    return strCat(xdg, "/kjit");
  const char *home = std::getenv("HOME");
  if (!home || home[0] != '/') {
    struct passwd *user = getpwuid(geteuid());
    home = user ? user->pw_dir : nullptr;
  }
  if (!home || home[0] != '/')
    return std::string();
  return strCat(home, "/.cache/kjit");
}

const std::vector<std::string> &codegenEnvironment() {
  // Sorted; each changes what kjit's compile produces. A backend's own
  // variables (the cuda toolkit's) join its fingerprint instead.
  static const std::vector<std::string> names = {
      "KJIT_CACHE_SALT",        // the user's own salt: a new value, new keys
      "KJIT_DEBUG",             // device asserts on by default
      "KJIT_DEFAULT_FP_FUSION", // the default of enable_fp_fusion
      "KJIT_INTERPRET",         // launches on the interpreter target
  };
  return names;
}

const std::vector<std::string> &neutralEnvironment() {
  static const std::vector<std::string> names = {
      "HOME",             // where the default cache lives
      "KJIT_CACHE_DIR",   // where the cache is, not what is in it
      "KJIT_CACHE_FSYNC", // how entries are written
      "KJIT_CACHE_LOCK_TIMEOUT",
      "KJIT_CACHE_MAX_SIZE",
      "KJIT_CACHE_VERBOSE",
      "KJIT_COMPILER_LIBRARY", // the build id of the library opened joins
                               // the key instead
      "KJIT_CUDA_DRIVER",      // which libcuda runs the cubin (the cuda
                               // backend's fingerprint covers the driver)
      "KJIT_CUDA_VERBOSE",
      "KJIT_DUMP_LOWERED_IR", // a copy of the lowered IR, beside the compile
      "KJIT_EXAMPLES_DIR",    // the conformance suite's kernel files
      "KJIT_HOST_STACK_KIB",  // how host kernels run, not what they are
      "KJIT_HOST_WORKERS",
      "KJIT_LAUNCH_TIMEOUT", // how long a host launch may run
      "KJIT_LOG",            // what the runtime logs (recompiles)
      "KJIT_PLUGINS",        // plugins observe; backends fingerprint
      "KJIT_PLUGIN_VERBOSE",
      "KJIT_REDIS_CONNECT_TIMEOUT", // the Redis store's settings: where
                                    // and how, never what
      "KJIT_REDIS_KEY_FILE", // verifies fleet cache values, never changes
                             // them
      "KJIT_REDIS_MAX_VALUE_SIZE",
      "KJIT_REDIS_NAMESPACE",
      "KJIT_REDIS_PASSWORD_FILE",
      "KJIT_REDIS_RETRY_AFTER",
      "KJIT_REDIS_TIMEOUT",
      "KJIT_REDIS_URL",
      "KJIT_REMOTE_CACHE_TTL", // how long the fleet keeps an entry
      "KJIT_TEST_BACKEND",     // the backend the conformance suite tests
      "KJIT_TEST_TARGET",      // and its target
      "KJIT_TRACE_FILE",
      "KJIT_TRACE_SUMMARY",
      "KJIT_TUNE_THREADS", // how many threads compile an autotuner's
                           // configurations
      "LD_LIBRARY_PATH",   // which libraries the compiler finds: their build
                           // ids join the key instead
      "TMPDIR",
      "XDG_CACHE_HOME",
  };
  return names;
}

//===----------------------------------------------------------------------===//
// Opening
//===----------------------------------------------------------------------===//

DiskCache::KeyLock &DiskCache::KeyLock::operator=(KeyLock &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    waited = other.waited;
    other.fd_ = -1;
  }
  return *this;
}

DiskCache::KeyLock::~KeyLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the flock
}

absl::StatusOr<std::unique_ptr<DiskCache>>
DiskCache::open(DiskCacheOptions options) {
  std::string &path = options.directory;
  if (path.empty())
    return absl::InvalidArgumentError("no cache directory");
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  if (options.readOnly)
    options.create = false;
  if (options.create)
    if (int error = makeDirectories(path))
      return absl::FailedPreconditionError(
          strCat("cannot create the cache directory '", path,
                 "': ", errnoText(error)));
  int root = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    int error = errno;
    if (error == ENOENT && !options.create)
      return absl::NotFoundError(
          strCat("the cache directory '", path, "' does not exist"));
    return absl::FailedPreconditionError(strCat(
        "cannot open the cache directory '", path, "': ", errnoText(error)));
  }
  struct stat st;
  std::string problem;
  if (fstat(root, &st) != 0)
    problem = strCat("cannot stat '", path, "': ", errnoText(errno));
  else
    problem = insecure(path, st);
  if (!problem.empty()) {
    ::close(root);
    return absl::PermissionDeniedError(problem);
  }
  if (absl::Status claimed = claimDirectory(root, path, options.create);
      !claimed.ok()) {
    ::close(root);
    return claimed;
  }
  std::unique_ptr<DiskCache> cache(new DiskCache(std::move(options), root));
  // A read-only look at a cache without these (one that was just marked)
  // sees no entries and no locks.
  const bool makeSubdirectories = !cache->options_.readOnly;
  for (int *sub : {&cache->entries_, &cache->locks_}) {
    const char *name = sub == &cache->entries_ ? "entries" : "locks";
    *sub = openSubdirectory(root, name, makeSubdirectories);
    // Taken at once: the next directory's mkdirat would replace it.
    int error = errno;
    if (*sub < 0 && error == ENOENT && !makeSubdirectories)
      continue;
    if (*sub < 0)
      return absl::FailedPreconditionError(
          strCat("cannot open '", cache->options_.directory, "/", name,
                 "': ", errnoText(error),
                 error == ELOOP || error == ENOTDIR
                     ? " (it must be a directory, not a link)"
                     : ""));
    if (fstat(*sub, &st) == 0) {
      std::string subProblem =
          insecure(strCat(cache->options_.directory, "/", name), st);
      if (!subProblem.empty())
        return absl::PermissionDeniedError(subProblem);
    }
  }
  return cache;
}

namespace {
/// The open caches, whose counters exit() flushes: a process that ends with
/// exit() (a tool's fatal error) or never destroys its runtime (the global
/// one) keeps its counts. Never destroyed, so that caches destroyed late
/// can still leave it.
struct LiveCaches {
  std::mutex mutex;
  std::vector<DiskCache *> caches;
};
LiveCaches &liveCaches() {
  static LiveCaches *live = [] {
    std::atexit([] {
      LiveCaches &all = liveCaches();
      std::lock_guard<std::mutex> lock(all.mutex);
      for (DiskCache *cache : all.caches)
        cache->flushStats();
    });
    return new LiveCaches;
  }();
  return *live;
}
} // namespace

DiskCache::DiskCache(DiskCacheOptions options, int root)
    : options_(std::move(options)), root_(root) {
  LiveCaches &live = liveCaches();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.caches.push_back(this);
}

DiskCache::~DiskCache() {
  {
    LiveCaches &live = liveCaches();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.caches.erase(std::remove(live.caches.begin(), live.caches.end(), this),
                      live.caches.end());
  }
  flushStats();
  for (int fd : {entries_, locks_, root_})
    if (fd >= 0)
      ::close(fd);
}

void DiskCache::warn(std::string_view message) {
  if (options_.warn)
    options_.warn(message);
}

void DiskCache::note(std::string_view message) {
  if (options_.verbose && options_.note)
    options_.note(message);
}

bool DiskCache::firstTimeKept(std::string_view key) {
  std::lock_guard<std::mutex> guard(keptMutex_);
  return kept_.emplace(key).second;
}

void DiskCache::warnOnce(int which, std::string_view message) {
  if (!(warned_.fetch_or(uint32_t(which)) & uint32_t(which)))
    warn(message);
}

std::string DiskCache::entryPath(std::string_view key) const {
  return strCat(options_.directory, "/entries/", key.substr(0, 2), "/", key);
}

int DiskCache::openShard(std::string_view key, bool create) {
  std::string name(key.substr(0, 2));
  return openSubdirectory(entries_, name.c_str(), create && !options_.readOnly);
}

std::string DiskCache::shardProblem(int shard, std::string_view key) const {
  struct stat st;
  std::string path = strCat(options_.directory, "/entries/", key.substr(0, 2));
  if (fstat(shard, &st) != 0)
    return strCat("cannot stat '", path, "': ", errnoText(errno));
  return insecure(path, st);
}

namespace {
/// Reads the entry file open as `fd`, of `size` bytes: its header first,
/// so that a file that is not an entry (or whose header does not describe
/// it) is refused after 96 bytes however large it is, then the whole file.
absl::StatusOr<EntryData> readEntryFile(int fd, uint64_t size,
                                        std::string_view key,
                                        EntryHeader *header = nullptr) {
  const size_t headerSize = size_t(std::min<uint64_t>(size, kHeaderSize));
  std::string bytes = readAll(fd, headerSize);
  if (bytes.size() != headerSize)
    return absl::DataLossError("it was shorter than its size when read");
  if (absl::Status valid = checkEntryHeader(bytes, size, key); !valid.ok())
    return valid;
  bytes = readAll(fd, size_t(size));
  if (bytes.size() != size)
    return absl::DataLossError("it was shorter than its size when read");
  return decodeEntry(bytes, key, header);
}

/// Why a valid entry file may not be trusted (another user's, or one
/// others may write), or empty.
std::string untrustedEntry(const struct stat &st) {
  if (st.st_uid != geteuid())
    return strCat("it belongs to uid ", st.st_uid, ", not to this user (uid ",
                  geteuid(), ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "0%o", unsigned(st.st_mode & 07777));
    return strCat("it can be written by others (mode ", mode, ")");
  }
  return std::string();
}
} // namespace

//===----------------------------------------------------------------------===//
// Reads
//===----------------------------------------------------------------------===//

std::string DiskCache::removeEntry(int shard, std::string_view name, int fd) {
  if (options_.readOnly)
    return "the cache is open read-only";
  std::string file(name);
  struct stat there;
  if (fstatat(shard, file.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0)
    return std::string(); // gone already
  // Only the file that was read: another process may have replaced it with
  // a good entry meanwhile.
  struct stat read;
  if (fd >= 0 && fstat(fd, &read) == 0 &&
      (read.st_dev != there.st_dev || read.st_ino != there.st_ino))
    return std::string();
  // A directory goes only when it is empty: what is in it is not kjit's.
  if (unlinkat(shard, file.c_str(),
               S_ISDIR(there.st_mode) ? AT_REMOVEDIR : 0) != 0 &&
      errno != ENOENT)
    return errnoText(errno);
  return std::string();
}

DiskCache::Lookup DiskCache::get(EntryKind kind, std::string_view key,
                                 bool countMiss) {
  Lookup lookup;
  const bool artifact = kind == EntryKind::Artifact;
  // Tuning records and choices have no hit and miss counters of their own:
  // the autotuner's log says what it found.
  const bool counted = artifact || kind == EntryKind::Manifest;
  auto miss = [&] {
    if (countMiss && counted)
      count(artifact ? Counter::ArtifactMisses : Counter::ManifestMisses);
    note(strCat("disk cache: miss: ", kindName(kind), " ", key));
    return lookup;
  };
  if (!isValidKey(key))
    return miss();
  int shard = openShard(key, /*create=*/false);
  if (shard < 0) {
    if (errno != ENOENT && !options_.readOnly) {
      // A link or a file where a shard directory belongs: it goes, and the
      // next put makes the directory.
      std::string name(key.substr(0, 2));
      lookup.problem = strCat("'", options_.directory, "/entries/", name,
                              "' is not a directory: ", errnoText(errno));
      (void)unlinkat(entries_, name.c_str(), 0);
      lookup.result = Lookup::Result::Invalid;
      count(Counter::Corrupt);
      warn(strCat("disk cache: ", lookup.problem, "; it was removed"));
    }
    return miss();
  }
  if (std::string problem = shardProblem(shard, key); !problem.empty()) {
    ::close(shard);
    warnOnce(kWarnShard, strCat("disk cache: ", problem,
                                "; the entries in it are not used"));
    return miss();
  }
  std::string name(key);
  int fd = openat(shard, name.c_str(),
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  std::string problem;
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT) {
      ::close(shard);
      return miss();
    }
    problem = error == ELOOP
                  ? "it is a symbolic link"
                  : strCat("it cannot be opened: ", errnoText(error));
    if (error == EMFILE || error == ENFILE || error == ENOMEM) {
      ::close(shard); // the process's trouble, not the entry's
      return miss();
    }
  } else {
    struct stat st;
    if (fstat(fd, &st) != 0)
      problem = strCat("it cannot be examined: ", errnoText(errno));
    else if (!S_ISREG(st.st_mode))
      problem = S_ISDIR(st.st_mode) ? "it is a directory"
                                    : "it is not a regular file";
    else if (uint64_t(st.st_size) > kMaxFileSize)
      problem = strCat("it is too large (", uint64_t(st.st_size), " bytes)");
    else {
      absl::StatusOr<EntryData> entry =
          readEntryFile(fd, uint64_t(st.st_size), key);
      if (!entry.ok())
        problem = std::string(entry.status().message());
      else if (entry->kind != kind)
        problem = strCat("it is a ", kindName(entry->kind), ", not a ",
                         kindName(kind));
      else if (std::string untrusted = untrustedEntry(st); !untrusted.empty())
        problem = untrusted;
      else {
        // A hit: its time of use for eviction (least recently used).
        if (!options_.readOnly)
          (void)futimens(fd, nullptr);
        ::close(fd);
        ::close(shard);
        lookup.result = Lookup::Result::Hit;
        lookup.entry = std::move(*entry);
        if (counted)
          count(artifact ? Counter::ArtifactHits : Counter::ManifestHits);
        count(Counter::BytesRead, uint64_t(st.st_size));
        note(strCat("disk cache: hit: ", kindName(kind), " ", key));
        return lookup;
      }
    }
  }
  lookup.result = Lookup::Result::Invalid;
  lookup.problem = problem;
  count(Counter::Corrupt);
  std::string kept = removeEntry(shard, key, fd);
  if (kept.empty())
    warn(strCat("disk cache: the ", kindName(kind), " entry '", entryPath(key),
                "' is invalid (", problem, "); it is removed and rebuilt"));
  else if (firstTimeKept(key)) // the look after the key's lock meets it too
    warn(strCat("disk cache: the ", kindName(kind), " entry '", entryPath(key),
                "' is invalid (", problem, ") and cannot be removed (", kept,
                "); the kernel is compiled again, and stored once it is "
                "removed"));
  if (fd >= 0)
    ::close(fd);
  ::close(shard);
  miss();
  flushStats(); // rare, and worth keeping if the process dies
  return lookup;
}

void DiskCache::reject(std::string_view key, std::string_view why) {
  count(Counter::Corrupt);
  std::string kept;
  int shard = openShard(key, /*create=*/false);
  if (shard >= 0) {
    kept = removeEntry(shard, key, -1);
    ::close(shard);
  }
  warn(strCat("disk cache: the entry '", entryPath(key), "' cannot be used (",
              why, ")",
              kept.empty() ? "; it is removed and rebuilt"
                           : strCat(" and cannot be removed (", kept, ")")));
  flushStats();
}

absl::StatusOr<EntryData> DiskCache::read(std::string_view key,
                                          EntryHeader *header) {
  if (!isValidKey(key))
    return absl::InvalidArgumentError(
        strCat("'", key, "' is not a key (64 hex digits)"));
  int shard = openShard(key, /*create=*/false);
  if (shard < 0)
    return absl::NotFoundError(strCat("no entry ", key));
  if (std::string problem = shardProblem(shard, key); !problem.empty()) {
    ::close(shard);
    return absl::DataLossError(problem);
  }
  std::string name(key);
  int fd = openat(shard, name.c_str(),
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  int error = errno;
  ::close(shard);
  if (fd < 0)
    return error == ENOENT
               ? absl::NotFoundError(strCat("no entry ", key))
               : absl::DataLossError(strCat(
                     error == ELOOP ? std::string("it is a symbolic link")
                                    : errnoText(error)));
  struct stat st;
  absl::StatusOr<EntryData> entry = absl::DataLossError("unreadable");
  if (fstat(fd, &st) != 0)
    entry = absl::DataLossError(errnoText(errno));
  else if (!S_ISREG(st.st_mode))
    entry = absl::DataLossError("it is not a regular file");
  else if (uint64_t(st.st_size) > kMaxFileSize)
    entry = absl::DataLossError("it is too large");
  else {
    entry = readEntryFile(fd, uint64_t(st.st_size), key, header);
    std::string untrusted = untrustedEntry(st);
    if (entry.ok() && !untrusted.empty())
      entry = absl::DataLossError(untrusted);
  }
  ::close(fd);
  return entry;
}

//===----------------------------------------------------------------------===//
// Writes
//===----------------------------------------------------------------------===//

bool DiskCache::put(const EntryData &entry) {
  return store(entry, /*ifAbsent=*/false) == PutResult::Stored;
}

DiskCache::PutResult DiskCache::putIfAbsent(const EntryData &entry) {
  return store(entry, /*ifAbsent=*/true);
}

/// Moves `temp` to `name` in `shard` unless `name` exists: renameat2's
/// RENAME_NOREPLACE, else (a file system without it) a hard link, which
/// never replaces either, else a look and a rename, which can race with
/// another writer between the two (a file system without hard links). 0,
/// EEXIST when `name` exists, or the errno that stopped it; `temp` is gone
/// unless an error other than EEXIST is returned.
int DiskCache::publishIfAbsent(int shard, const std::string &temp,
                               const std::string &name) {
  if (!options_.noRenameNoReplace) {
    if (renameat2(shard, temp.c_str(), shard, name.c_str(), RENAME_NOREPLACE) ==
        0)
      return 0;
    if (errno == EEXIST) {
      (void)unlinkat(shard, temp.c_str(), 0);
      return EEXIST;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
      return errno;
  }
  if (!options_.noHardLinks) {
    if (linkat(shard, temp.c_str(), shard, name.c_str(), 0) == 0) {
      (void)unlinkat(shard, temp.c_str(), 0);
      return 0;
    }
    int error = errno;
    if (error == EEXIST) {
      (void)unlinkat(shard, temp.c_str(), 0);
      return EEXIST;
    }
    if (error != EPERM && error != ENOTSUP && error != ENOSYS &&
        error != EMLINK)
      return error;
  }
  struct stat st;
  if (fstatat(shard, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    (void)unlinkat(shard, temp.c_str(), 0);
    return EEXIST;
  }
  return renameat(shard, temp.c_str(), shard, name.c_str()) == 0 ? 0 : errno;
}

DiskCache::PutResult DiskCache::store(const EntryData &entry, bool ifAbsent) {
  if (!isValidKey(entry.key) || options_.readOnly)
    return PutResult::Failed;
  auto failed = [&](const std::string &why) {
    count(Counter::WriteErrors);
    warnOnce(kWarnWrite,
             strCat("disk cache: cannot store an entry in '",
                    options_.directory, "': ", why,
                    "; the kernel still runs (later write errors are only "
                    "counted: kjit-cache stats)"));
    flushStats();
    return PutResult::Failed;
  };
  std::string bytes = encodeEntry(entry);
  int shard = openShard(entry.key, /*create=*/true);
  if (shard < 0)
    return failed(strCat("cannot make its directory: ", errnoText(errno)));
  if (std::string problem = shardProblem(shard, entry.key); !problem.empty()) {
    ::close(shard);
    return failed(problem);
  }
  std::string temp = temporaryName();
  int fd = openat(shard, temp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    int error = errno;
    ::close(shard);
    return failed(strCat("cannot create a file: ", errnoText(error)));
  }
  int error = 0;
  bool ok = writeAll(fd, bytes, error);
  if (ok && options_.durable && fsync(fd) != 0) {
    ok = false;
    error = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  std::string name = entry.key;
  int64_t replaced = 0;
  if (ok && ifAbsent) {
    error = publishIfAbsent(shard, temp, name);
    if (error == EEXIST) {
      ::close(shard);
      note(strCat("disk cache: kept: ", kindName(entry.kind), " ", entry.key,
                  " (another writer's)"));
      return PutResult::Exists;
    }
    ok = error == 0;
  } else if (ok) {
    struct stat old;
    if (fstatat(shard, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(old.st_mode))
      replaced = old.st_size;
    if (renameat(shard, temp.c_str(), shard, name.c_str()) != 0) {
      error = errno;
      // A directory where the entry belongs (rename never replaces one).
      if ((error == EISDIR || error == ENOTEMPTY || error == EEXIST) &&
          unlinkat(shard, name.c_str(), AT_REMOVEDIR) == 0 &&
          renameat(shard, temp.c_str(), shard, name.c_str()) == 0)
        error = 0;
      ok = error == 0;
    }
  }
  if (!ok) {
    (void)unlinkat(shard, temp.c_str(), 0); // ours only; ENOENT is fine
    ::close(shard);
    return failed(errnoText(error));
  }
  if (options_.durable)
    (void)fsync(shard); // the rename itself
  ::close(shard);
  count(Counter::BytesWritten, bytes.size());
  pendingSize_.fetch_add(int64_t(bytes.size()) - replaced);
  note(strCat("disk cache: stored: ", kindName(entry.kind), " ", entry.key,
              " (", bytes.size(), " bytes)"));
  flushStats();
  maybeEvict();
  return PutResult::Stored;
}

DiskCache::KeyLock DiskCache::lock(std::string_view key,
                                   std::string_view doing) {
  KeyLock lock;
  if (!isValidKey(key) || options_.readOnly)
    return lock;
  std::string name(key);
  int fd = openat(locks_, name.c_str(),
                  O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    warnOnce(kWarnLockFile,
             strCat("disk cache: cannot open the lock file '",
                    options_.directory, "/locks/", key, "': ", errnoText(errno),
                    "; processes may compile a kernel at the same time"));
    return lock;
  }
  int error = lockWithTimeout(fd, options_.lockTimeout, &lock.waited);
  if (error == EWOULDBLOCK) {
    count(Counter::LockTimeouts);
    warn(strCat("disk cache: waited ", lock.waited.count(),
                " ms for another process ", doing, " ", key, "; ", doing,
                " it here as well"));
    ::close(fd);
    flushStats();
    return lock;
  }
  if (error != 0) { // no locks on this file system: no single flight
    ::close(fd);
    return lock;
  }
  // Marks the lock as in use for the stale-lock sweep.
  (void)futimens(fd, nullptr);
  lock.fd_ = fd;
  return lock;
}

//===----------------------------------------------------------------------===//
// Counters
//===----------------------------------------------------------------------===//

void DiskCache::count(Counter counter, uint64_t amount) {
  pending_[size_t(counter)].fetch_add(amount, std::memory_order_relaxed);
}

namespace {
/// The counters in DIR/stats, read under a shared lock (a writer rewrites
/// the file in place under an exclusive one): zeros when it is missing or
/// busy, and `valid` false when it is not a stats file (nor a regular file:
/// opened without blocking, so that a FIFO there cannot hang the reader).
Stats loadStats(int root, bool &valid) {
  Stats stats;
  valid = true;
  int fd =
      openat(root, "stats", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return stats;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    valid = false;
    ::close(fd);
    return stats;
  }
  if (lockWithTimeout(fd, std::chrono::milliseconds(2000), nullptr, LOCK_SH) ==
      0) {
    std::string text = readAll(fd, 4096);
    if (!text.empty() && !parseStats(text, stats)) {
      valid = false;
      stats = Stats();
    }
  }
  ::close(fd);
  return stats;
}
} // namespace

int DiskCache::updateStats(const std::function<void(Stats &)> &change) {
  // The file is its own lock, and is rewritten in place: a rename over it
  // would cost a millisecond on ext4, which flushes a file renamed over
  // another (auto_da_alloc), at the end of every process.
  int fd = openat(root_, "stats",
                  O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    int error = errno;
    // A cache on a read-only mount, or in a directory this user may not
    // write, keeps no counters, and its puts already say why; anything else
    // in the way (a directory or a link named stats) is said once.
    if (error == EISDIR || error == ELOOP)
      warnOnce(kWarnStats, strCat("disk cache: '", options_.directory,
                                  "/stats' is not a regular file; the "
                                  "counters are not kept"));
    else if (error != EROFS && error != EACCES)
      warnOnce(kWarnStats,
               strCat("disk cache: cannot open '", options_.directory,
                      "/stats': ", errnoText(error),
                      "; the counters are not kept"));
    return error;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    warnOnce(kWarnStats, strCat("disk cache: '", options_.directory,
                                "/stats' is not a regular file; the counters "
                                "are not kept"));
    return EINVAL;
  }
  // Held for microseconds; a holder stopped with SIGSTOP costs 2 s once.
  if (int error = lockWithTimeout(fd, std::chrono::milliseconds(2000))) {
    ::close(fd);
    return error;
  }
  std::string text = readAll(fd, 4096);
  Stats stats;
  if (!text.empty() && !parseStats(text, stats)) {
    stats = Stats();
    warnOnce(kWarnStats, strCat("disk cache: '", options_.directory,
                                "/stats' is not a stats file; the counters "
                                "start again from zero"));
  }
  change(stats);
  std::string out = printStats(stats);
  int error = 0;
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pwrite(fd, out.data() + done, out.size() - done, off_t(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += size_t(n);
  }
  if (!error && text.size() > out.size() && ftruncate(fd, off_t(out.size())))
    error = errno;
  ::close(fd);
  return error;
}

void DiskCache::flushStats() {
  if (options_.readOnly)
    return;
  std::lock_guard<std::mutex> guard(statsMutex_);
  std::array<uint64_t, kCounterCount> deltas;
  bool any = false;
  for (size_t i = 0; i < kCounterCount; ++i) {
    deltas[i] = pending_[i].exchange(0, std::memory_order_relaxed);
    any |= deltas[i] != 0;
  }
  int64_t sizeDelta = pendingSize_.exchange(0);
  if (!any && sizeDelta == 0)
    return;
  int error = updateStats([&](Stats &stats) {
    for (size_t i = 0; i < kCounterCount; ++i)
      stats.counters[i] += deltas[i];
    if (stats.sizeKnown)
      stats.sizeEstimate =
          sizeDelta < 0 && uint64_t(-sizeDelta) > stats.sizeEstimate
              ? 0
              : stats.sizeEstimate + uint64_t(sizeDelta);
  });
  // Busy: kept for the next flush. A read-only cache keeps its counters in
  // the process (EACCES, EROFS): dropped.
  if (error == EWOULDBLOCK) {
    for (size_t i = 0; i < kCounterCount; ++i)
      pending_[i].fetch_add(deltas[i], std::memory_order_relaxed);
    pendingSize_.fetch_add(sizeDelta);
  }
}

Stats DiskCache::stats() {
  flushStats();
  bool valid;
  Stats stats = loadStats(root_, valid);
  for (size_t i = 0; i < kCounterCount; ++i)
    stats.counters[i] += pending_[i].load(std::memory_order_relaxed);
  return stats;
}

absl::Status DiskCache::zeroStats() {
  if (options_.readOnly)
    return absl::FailedPreconditionError("the cache is open read-only");
  std::lock_guard<std::mutex> guard(statsMutex_);
  for (auto &counter : pending_)
    counter.store(0);
  int error = updateStats([](Stats &stats) { stats.counters = {}; });
  if (error)
    return absl::FailedPreconditionError(strCat(
        "cannot write '", options_.directory, "/stats': ", errnoText(error)));
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Listing, eviction, clearing
//===----------------------------------------------------------------------===//

std::vector<Listing> DiskCache::list() {
  std::vector<Listing> entries;
  for (const std::string &shardName : listDirectory(entries_)) {
    if (!isShardName(shardName))
      continue;
    int shard = openSubdirectory(entries_, shardName.c_str(), false);
    if (shard < 0)
      continue;
    for (const std::string &name : listDirectory(shard)) {
      struct stat st;
      if (!isValidKey(name) || name.compare(0, 2, shardName) != 0 ||
          fstatat(shard, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue; // temporaries, strangers, files that just went away
      Listing entry;
      entry.key = name;
      entry.size = S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
      entry.mtimeNanos = mtimeNanos(st);
      entries.push_back(std::move(entry));
    }
    ::close(shard);
  }
  std::sort(entries.begin(), entries.end(),
            [](const Listing &a, const Listing &b) {
              return a.mtimeNanos != b.mtimeNanos ? a.mtimeNanos < b.mtimeNanos
                                                  : a.key < b.key;
            });
  return entries;
}

void DiskCache::maybeEvict() {
  bool valid;
  Stats stats;
  {
    std::lock_guard<std::mutex> guard(statsMutex_);
    stats = loadStats(root_, valid);
  }
  // Unknown (a new stats file) or over the cap: count, and evict if needed.
  // 0 means no cap, as in ccache.
  if (options_.maxSize == 0 && stats.sizeKnown)
    return;
  if (stats.sizeKnown && stats.sizeEstimate <= options_.maxSize)
    return;
  PruneResult result =
      prune(options_.maxSize == 0 ? UINT64_MAX : options_.maxSize,
            kStaleSeconds, /*wait=*/false);
  // Another process evicting is the normal case of a busy cache. A lock that
  // cannot be used stops every eviction: said, or the cache would outgrow
  // its cap without a word.
  if (!result.ran && !result.busy && options_.maxSize != 0)
    warnOnce(kWarnCleanupLock,
             strCat("disk cache: cannot evict: ", result.problem,
                    "; the cache may grow past its cap of ",
                    formatSize(options_.maxSize), " (KJIT_CACHE_MAX_SIZE)"));
}

DiskCache::PruneResult DiskCache::prune(uint64_t maxSize, int64_t staleSeconds,
                                        bool wait) {
  PruneResult result;
  result.ran = false;
  if (options_.readOnly) {
    result.problem = "the cache is open read-only";
    return result;
  }
  const std::string lockPath = strCat(options_.directory, "/cleanup.lock");
  int cleanup = openat(root_, "cleanup.lock",
                       O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (cleanup < 0) {
    result.problem = strCat("cannot open '", lockPath, "': ", errnoText(errno));
    return result;
  }
  const std::chrono::milliseconds timeout(wait ? 60000 : 0);
  if (int error = lockWithTimeout(cleanup, timeout)) {
    ::close(cleanup);
    result.busy = error == EWOULDBLOCK;
    if (!result.busy)
      result.problem =
          strCat("cannot lock '", lockPath, "': ", errnoText(error));
    else if (wait)
      result.problem = strCat("another process held '", lockPath, "' for ",
                              timeout.count() / 1000,
                              " s (an eviction or a clear in progress)");
    else
      result.problem = "another process is evicting";
    return result;
  }
  result.ran = true;
  // Files last written before this are stale. An age past the epoch (up to
  // INT64_MAX seconds) makes nothing stale rather than overflowing into a
  // time that makes everything stale; a negative age counts as 0.
  const int64_t now = nowNanos();
  const int64_t ageSeconds = std::max<int64_t>(staleSeconds, 0);
  const int64_t staleBefore = ageSeconds > now / 1000000000
                                  ? std::numeric_limits<int64_t>::min()
                                  : now - ageSeconds * 1000000000;
  struct Candidate {
    int64_t mtime;
    uint64_t size;
    std::string shard, name;
  };
  std::vector<Candidate> candidates;
  uint64_t total = 0;
  for (const std::string &shardName : listDirectory(entries_)) {
    if (!isShardName(shardName))
      continue;
    int shard = openSubdirectory(entries_, shardName.c_str(), false);
    if (shard < 0)
      continue;
    for (const std::string &name : listDirectory(shard)) {
      const bool temporary = isTemporaryName(name);
      struct stat st;
      if ((!temporary && !isEntryName(shardName, name)) ||
          fstatat(shard, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue; // not kjit's; or vanished: another cleaner, or a reader
      if (temporary) {
        // A writer killed before its rename left it; a live writer's
        // temporary is younger than any sane staleSeconds.
        if (mtimeNanos(st) < staleBefore &&
            unlinkat(shard, name.c_str(), 0) == 0)
          ++result.staleTemporaries;
        continue;
      }
      if (!S_ISREG(st.st_mode))
        continue;
      candidates.push_back(
          {mtimeNanos(st), uint64_t(st.st_size), shardName, name});
      total += uint64_t(st.st_size);
    }
    ::close(shard);
  }
  if (total > maxSize) {
    uint64_t target = maxSize - maxSize / 10;
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate &a, const Candidate &b) {
                return a.mtime < b.mtime;
              });
    for (const Candidate &victim : candidates) {
      if (total <= target)
        break;
      int shard = openSubdirectory(entries_, victim.shard.c_str(), false);
      if (shard < 0)
        continue;
      struct stat st;
      // Skipped when used or replaced since the scan.
      if (fstatat(shard, victim.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          mtimeNanos(st) == victim.mtime &&
          unlinkat(shard, victim.name.c_str(), 0) == 0) {
        ++result.evicted;
        result.evictedBytes += victim.size;
        total -= victim.size;
      }
      ::close(shard);
    }
  }
  result.keptBytes = total;
  result.keptEntries = candidates.size() - result.evicted;
  // Lock files of compiles long finished; one still held is skipped.
  for (const std::string &name : listDirectory(locks_)) {
    struct stat st;
    if (!isValidKey(name) ||
        fstatat(locks_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        mtimeNanos(st) >= staleBefore)
      continue;
    int fd = openat(locks_, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        unlinkat(locks_, name.c_str(), 0) == 0)
      ++result.staleLocks;
    ::close(fd);
  }
  // The counted size replaces the estimate. (Puts that finished during
  // the scan may be counted twice or not at all: the next scan corrects it.)
  {
    std::lock_guard<std::mutex> guard(statsMutex_);
    count(Counter::Evictions, result.evicted);
    std::array<uint64_t, kCounterCount> deltas;
    for (size_t i = 0; i < kCounterCount; ++i)
      deltas[i] = pending_[i].exchange(0);
    pendingSize_.store(0);
    (void)updateStats([&](Stats &stats) {
      for (size_t i = 0; i < kCounterCount; ++i)
        stats.counters[i] += deltas[i];
      stats.sizeKnown = true;
      stats.sizeEstimate = total;
    });
  }
  ::close(cleanup);
  return result;
}

/// The kind of the entry file `name` in `shard` from its header alone, or
/// nullopt: not a valid entry of that key (too short, a link, ...).
std::optional<EntryKind> headerKind(int shard, const std::string &name) {
  int fd = openat(shard, name.c_str(),
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  std::string header;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      uint64_t(st.st_size) >= kHeaderSize)
    header = readAll(fd, kHeaderSize);
  ::close(fd);
  if (header.size() != kHeaderSize ||
      !checkEntryHeader(header, uint64_t(st.st_size), name).ok())
    return std::nullopt;
  uint32_t kind = 0;
  for (int byte = 3; byte >= 0; --byte) // little-endian, at offset 12
    kind = (kind << 8) | uint8_t(header[12 + byte]);
  return EntryKind(kind);
}

absl::StatusOr<uint64_t>
DiskCache::clear(const std::function<bool(EntryKind)> &which) {
  if (options_.readOnly)
    return absl::FailedPreconditionError("the cache is open read-only");
  uint64_t removed = 0, failures = 0;
  std::string firstFailure;
  // Removes one of kjit's names; a failure other than "already gone" is
  // counted, so that clear never reports a cache it did not empty as empty.
  auto removeName = [&](int dir, const std::string &path,
                        const std::string &name, int flags) {
    if (unlinkat(dir, name.c_str(), flags) == 0)
      return true;
    if (errno != ENOENT && failures++ == 0)
      firstFailure = strCat("'", path, "/", name, "': ", errnoText(errno));
    return false;
  };
  const std::string entriesPath = strCat(options_.directory, "/entries");
  int cleanup = openat(root_, "cleanup.lock",
                       O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (cleanup >= 0)
    (void)lockWithTimeout(cleanup, std::chrono::milliseconds(60000));
  for (const std::string &shardName : listDirectory(entries_)) {
    if (!isShardName(shardName))
      continue;
    int shard = openSubdirectory(entries_, shardName.c_str(), false);
    if (shard < 0) {
      // A file or a link where a shard belongs (a reader removes it too).
      if (errno == ENOTDIR || errno == ELOOP)
        removeName(entries_, entriesPath, shardName, 0);
      continue;
    }
    const std::string shardPath = strCat(entriesPath, "/", shardName);
    for (const std::string &name : listDirectory(shard)) {
      struct stat st;
      if ((!isEntryName(shardName, name) && !isTemporaryName(name)) ||
          fstatat(shard, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;
      if (which) { // only the valid entries of those kinds
        std::optional<EntryKind> kind =
            isEntryName(shardName, name) && S_ISREG(st.st_mode)
                ? headerKind(shard, name)
                : std::nullopt;
        if (!kind || !which(*kind))
          continue;
      }
      // A directory goes only when it is empty: what is in it is not kjit's.
      if (removeName(shard, shardPath, name,
                     S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) &&
          isEntryName(shardName, name) && S_ISREG(st.st_mode))
        ++removed;
    }
    ::close(shard);
    // Only when empty: a file kjit did not make keeps its shard.
    (void)unlinkat(entries_, shardName.c_str(), AT_REMOVEDIR);
  }
  const std::string locksPath = strCat(options_.directory, "/locks");
  if (!which)
    for (const std::string &name : listDirectory(locks_))
      if (isValidKey(name))
        removeName(locks_, locksPath, name, 0);
  {
    std::lock_guard<std::mutex> guard(statsMutex_);
    pendingSize_.store(0);
    // Some entries stay: their size is counted again by the next eviction.
    bool emptied = !which;
    (void)updateStats([emptied](Stats &stats) {
      stats.sizeKnown = emptied;
      stats.sizeEstimate = 0;
    });
  }
  if (cleanup >= 0)
    ::close(cleanup);
  if (failures)
    return absl::FailedPreconditionError(strCat(
        "removed ", removed, " entries, but ", failures,
        failures == 1 ? " file" : " files",
        " could not be removed: ", firstFailure, failures > 1 ? ", ..." : ""));
  return removed;
}

} // namespace kjit::cache
