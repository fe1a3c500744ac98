//===- kjit-cache.cpp - inspect and maintain kjit's disk cache ------------===//
//
// In the style of `ccache -s`: counters, a listing, one entry, a check of
// every entry, eviction and clearing, with --json for scripts. Links the
// disk cache library alone (no runtime, no LLVM). docs/DiskCache.md.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"

#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Cache/TuningRecord.h"
#include "kjit/Model/Json.h"
#include "kjit/Support/StrCat.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace cache = kjit::cache;
using kjit::rt::JsonValue;
using kjit::rt::JsonWriter;
namespace cli = kjit::cli;

namespace {

// Messages quote arguments and paths, whose control bytes are escaped so
// that they cannot drive the terminal.
[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "kjit-cache: error: %s\n(kjit-cache --help)\n",
               kjit::escapeControl(message).c_str());
  std::exit(2);
}

[[noreturn]] void fatal(const std::string &message) {
  std::fprintf(stderr, "kjit-cache: error: %s\n",
               kjit::escapeControl(message).c_str());
  std::exit(2);
}

std::string formatTime(int64_t nanos) {
  time_t seconds = time_t(nanos / 1000000000);
  struct tm local;
  char text[64];
  if (!localtime_r(&seconds, &local) ||
      !std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local))
    return "?";
  return text;
}

/// A median in microseconds, as the autotuner's log writes it: "11.8 us".
std::string microseconds(double nanos) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f us", nanos / 1000.0);
  return text;
}

/// What an entry's metadata says it holds: "kernel add (host/x86_64)",
/// "file examples/vector_add.mlir (1 kernel)", "timing of softmax [n=4;
/// in=fp32] C=2, num_warps=2: 11.8 us (host/x86_64)", "choice of softmax
/// [n=4; in=fp32]: C=2, num_warps=2 of 3 (host/x86_64)".
std::string describe(const cache::EntryData &entry) {
  if (entry.kind == cache::EntryKind::Tuning) {
    absl::StatusOr<cache::TimingRecord> record =
        cache::timingRecordFromJson(entry.metadata);
    if (!record.ok())
      return std::string(record.status().message());
    return "timing of " + record->kernel + " [" + record->tuningKey + "] " +
           record->config + ": " +
           (record->ran ? microseconds(record->medianNanos)
                        : "cannot run (" + record->reason + ")") +
           " (" + record->device.target + "/" + record->device.arch + ")";
  }
  if (entry.kind == cache::EntryKind::Choice) {
    absl::StatusOr<cache::ChoiceRecord> record =
        cache::choiceRecordFromJson(entry.metadata);
    if (!record.ok())
      return std::string(record.status().message());
    return "choice of " + record->kernel + " [" + record->tuningKey +
           "]: " + record->winnerConfig + " of " +
           std::to_string(record->timingKeys.size()) + " (" +
           record->device.target + "/" + record->device.arch + ")" +
           (record->confirmed ? "" : ", unconfirmed");
  }
  absl::StatusOr<JsonValue> metadata = kjit::rt::parseJson(entry.metadata);
  if (!metadata.ok() || !metadata->isObject())
    return "?";
  auto text = [&](const char *name) {
    const JsonValue *value = metadata->find(name);
    return value && value->isString() ? value->text() : std::string("?");
  };
  if (entry.kind == cache::EntryKind::Artifact)
    return "kernel " + text("kernel") + " (" + text("target") + "/" +
           text("arch") + ")";
  const JsonValue *kernels = metadata->find("kernels");
  size_t count = kernels && kernels->isArray() ? kernels->elements().size() : 0;
  return "file " + text("source") + " (" + std::to_string(count) +
         (count == 1 ? " kernel)" : " kernels)");
}

const char kDescription[] =
    R"(kjit-cache: inspect and maintain kjit's disk cache: the compiled kernels
and the kernel-file manifests that let a process launch without compiling,
and without loading the compiler (docs/DiskCache.md), and the autotuner's
timing and choice records (docs/Autotuning.md)
)";

const char kFooter[] =
    R"(stats, list, show and verify (without --delete) only read: they write
nothing, anywhere. No command writes into a directory that is not kjit's
cache (marked by kjit's CACHEDIR.TAG) or empty, and prune and clear remove
only the files kjit makes there. `kjit-cache COMMAND --help` describes one
command.

SIZE: 1073741824, 512K, 64M, 1G, 1.5GiB (powers of 1024).
Exit status: 0 done, 1 verify found a bad entry, 2 usage error, a cache
directory that cannot be used, or a command that could not do its work
(prune that could not take the cache's cleanup lock, clear that could not
remove everything).)";

const char kCommands[] = "stats, list, show, verify, prune, clear, env";

struct Options {
  std::string dir;
  bool json = false;
  std::string command;
  /// stats --zero, verify --delete, show KEY, clear --tuning.
  bool zero = false, remove = false, tuning = false;
  std::string key;
  /// prune --max-size, --stale-age.
  std::optional<uint64_t> maxSize;
  int64_t staleAge = cache::kStaleSeconds;
};

/// What a command's extra argument is told: the options it takes.
std::string extraArgument(const CLI::App &command, const std::string &extra) {
  const std::string &name = command.get_name();
  if (name == "show")
    return "show takes one key, not also '" + extra + "'";
  std::vector<std::string> own;
  for (const CLI::Option *option : command.get_options())
    if (option->get_name() != "--help" && option->get_name() != "--json" &&
        option->get_name() != "--dir")
      own.push_back(option->get_name());
  if (own.empty())
    return name + " takes no argument '" + extra + "'";
  std::string takes = own[0];
  for (size_t i = 1; i < own.size(); ++i)
    takes += (i + 1 == own.size() ? " and " : ", ") + own[i];
  return name + " takes " + takes + ", not '" + extra + "'";
}

Options parse(int argc, char **argv) {
  Options options;
  CLI::App app(kDescription, "kjit-cache");
  app.get_formatter()->column_width(24);
  // A repeated option takes its last value; unknown options, commands and
  // arguments are collected and reported below, in kjit-cache's words.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.allow_extras();
  app.require_subcommand(1, 1);
  app.get_formatter()->label("SUBCOMMAND", "COMMAND");
  if (std::optional<std::string> empty = cli::emptyInlineValue(argc, argv))
    usageError(*empty);

  // --dir and --json go before the command or after it.
  auto common = [&](CLI::App &on) {
    on.add_option("--dir", options.dir,
                  "the cache directory; default: KJIT_CACHE_DIR, else\n"
                  "$XDG_CACHE_HOME/kjit, else ~/.cache/kjit")
        ->type_name("DIR")
        ->check(cli::NonEmpty("directory"));
    on.add_flag("--json", options.json,
                "one JSON document on stdout instead of text");
  };
  common(app);
  auto command = [&](const char *name, const char *description) {
    CLI::App *added = app.add_subcommand(name, description);
    added->group("Commands");
    common(*added);
    return added;
  };
  command("stats", "the counters of every process that used the cache\n"
                   "(hits and misses of kernels and of manifests,\n"
                   "compiles, corrupt entries found, evictions, write\n"
                   "errors, lock timeouts, bytes read and written) and\n"
                   "what it holds now")
      ->add_flag("-z,--zero", options.zero, "set the counters to zero");
  command("list", "every entry, least recently used first: key, kind,\n"
                  "size, last use, and the kernel or file it holds");
  command("show", "one entry: its header, its metadata and the size of\n"
                  "its payload")
      ->add_option("KEY", options.key,
                   "the entry's key, or a prefix of one key")
      ->type_name("")
      ->required();
  command("verify", "reads and validates every entry; exits 1 when one is\n"
                    "bad")
      ->add_flag("--delete", options.remove,
                 "remove the bad entries (a launch that meets one\n"
                 "removes and rebuilds it anyway)");
  CLI::App *prune =
      command("prune", "evicts the least recently used entries until they fit\n"
                       "in 90% of the size limit, and removes the temporary\n"
                       "and lock files that killed processes left; exits 2\n"
                       "when it could not run");
  prune
      ->add_option_function<std::string>(
          "--max-size",
          [&](const std::string &size) {
            options.maxSize = cache::parseSize(size);
          },
          "the size limit (default: KJIT_CACHE_MAX_SIZE, else\n"
          "1 GiB; 0 evicts everything)")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](const std::string &text) -> std::string {
            if (cache::parseSize(text))
              return {};
            return "'" + text + "' is not a size (512M, 2G)";
          },
          ""));
  prune->footer("SIZE: 1073741824, 512K, 64M, 1G, 1.5GiB (powers of 1024).");
  prune
      ->add_option("--stale-age", options.staleAge,
                   "remove temporary and lock files older than this\n"
                   "(default 3600)")
      ->type_name("SECONDS")
      ->transform(cli::Count(0, std::numeric_limits<int64_t>::max(),
                             "number of seconds"));
  command("clear", "removes every entry (the counters stay)")
      ->add_flag("--tuning", options.tuning,
                 "only the autotuner's timing and choice records (the\n"
                 "next tuning times again)");
  command("env", "the environment variables whose values join every\n"
                 "kernel's key, and kjit's others, which do not");
  // After the commands: theirs is not repeated under each one's --help.
  app.footer(kFooter);

  std::string problem;
  bool missing = false; // a command's required argument ("KEY is required")
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    if (error.get_exit_code() == int(CLI::ExitCodes::Success))
      std::exit(app.exit(error)); // --help
    problem = error.what();
    missing = dynamic_cast<const CLI::RequiredError *>(&error);
  }
  // An unknown command is also a missing one: it is reported first.
  for (const std::string &extra : app.remaining()) {
    if (extra.rfind('-', 0) == 0)
      usageError("unknown option '" + extra.substr(0, extra.find('=')) + "'");
    usageError("unknown command '" + extra + "' (" + kCommands + ")");
  }
  std::vector<CLI::App *> chosen = app.get_subcommands();
  if (chosen.empty() && !problem.empty() && !missing)
    usageError(problem); // --dir without a value, ...
  if (chosen.empty())
    usageError(std::string("no command (") + kCommands + ")");
  if (!problem.empty())
    usageError(missing ? chosen[0]->get_name() + ": " + problem : problem);
  if (std::vector<std::string> extras = chosen[0]->remaining(); !extras.empty())
    usageError(extraArgument(*chosen[0], extras[0]));
  options.command = chosen[0]->get_name();

  if (options.dir.empty() && options.command != "env") {
    const char *env = std::getenv("KJIT_CACHE_DIR");
    if (env && !*env)
      fatal("KJIT_CACHE_DIR is empty (the disk cache is off); give --dir");
    options.dir = env ? std::string(env) : cache::defaultDirectory();
    if (options.dir.empty())
      fatal("no cache directory: KJIT_CACHE_DIR, XDG_CACHE_HOME and HOME "
            "are unset; give --dir");
  }
  return options;
}

enum class Access {
  /// stats, list, show, verify: nothing is written.
  Inspect,
  /// prune, clear, stats --zero, verify --delete: changes a cache that
  /// exists, never makes one.
  Maintain,
};

/// The cache, or null when there is none: the directory does not exist, or
/// is empty (an empty cache, left as it is). A directory that is not
/// kjit's cache is refused (exit 2).
std::unique_ptr<cache::DiskCache> openCache(const std::string &dir,
                                            Access access) {
  cache::DiskCacheOptions options;
  options.directory = dir;
  options.create = false;
  options.readOnly = access == Access::Inspect;
  options.warn = [](std::string_view message) {
    std::fprintf(stderr, "kjit-cache: warning: %s\n",
                 kjit::escapeControl(message).c_str());
  };
  if (const char *size = std::getenv("KJIT_CACHE_MAX_SIZE"); size && *size) {
    std::optional<uint64_t> parsed = cache::parseSize(size);
    if (!parsed)
      fatal(std::string("KJIT_CACHE_MAX_SIZE='") + size + "' is not a size");
    options.maxSize = *parsed;
  }
  absl::StatusOr<std::unique_ptr<cache::DiskCache>> opened =
      cache::DiskCache::open(std::move(options));
  if (absl::IsNotFound(opened.status()))
    return nullptr;
  if (!opened.ok())
    fatal(std::string(opened.status().message()));
  return std::move(*opened);
}

int stats(const Options &options) {
  bool zero = options.zero;
  std::unique_ptr<cache::DiskCache> disk =
      openCache(options.dir, zero ? Access::Maintain : Access::Inspect);
  if (zero && disk)
    if (absl::Status status = disk->zeroStats(); !status.ok())
      fatal(std::string(status.message()));
  cache::Stats counters = disk ? disk->stats() : cache::Stats();
  uint64_t artifacts = 0, manifests = 0, records = 0, invalid = 0, bytes = 0;
  std::vector<cache::Listing> entries;
  if (disk)
    entries = disk->list();
  for (const cache::Listing &entry : entries) {
    bytes += entry.size;
    absl::StatusOr<cache::EntryData> data = disk->read(entry.key);
    if (!data.ok())
      ++invalid;
    else if (data->kind == cache::EntryKind::Artifact)
      ++artifacts;
    else if (data->kind == cache::EntryKind::Manifest)
      ++manifests;
    else
      ++records; // the autotuner's timing and choice records
  }
  uint64_t maxSize = disk ? disk->options().maxSize : cache::kDefaultMaxSize;
  if (!disk)
    if (const char *size = std::getenv("KJIT_CACHE_MAX_SIZE"); size && *size)
      maxSize = cache::parseSize(size).value_or(maxSize);
  auto value = [&](cache::Counter counter) { return counters[counter]; };
  uint64_t hits = value(cache::Counter::ArtifactHits),
           misses = value(cache::Counter::ArtifactMisses);
  if (options.json) {
    std::string out;
    JsonWriter json(out);
    json.beginObject().key("directory").string(options.dir);
    for (size_t i = 0; i < cache::kCounterCount; ++i)
      json.key(cache::counterName(cache::Counter(i)))
          .integer(counters.counters[i]);
    json.key("entries")
        .integer(entries.size())
        .key("artifacts")
        .integer(artifacts)
        .key("manifests")
        .integer(manifests)
        .key("invalid")
        .integer(invalid)
        .key("tuning_records")
        .integer(records)
        .key("bytes")
        .integer(bytes)
        .key("max_size")
        .integer(maxSize)
        .endObject();
    std::printf("%s\n", out.c_str());
    return 0;
  }
  auto line = [](const char *name, const std::string &text) {
    std::printf("%-24s %s\n", name, text.c_str());
  };
  auto number = [](uint64_t n) { return std::to_string(n); };
  std::string state;
  struct stat st;
  if (!disk)
    state = ::stat(options.dir.c_str(), &st) == 0 ? " (empty)"
                                                  : " (does not exist)";
  line("cache directory", options.dir + state);
  std::string rate =
      hits + misses
          ? " (" + std::to_string(hits * 100 / (hits + misses)) + "% hits)"
          : "";
  line("kernel hits", number(hits) + rate);
  line("kernel misses", number(misses));
  line("manifest hits", number(value(cache::Counter::ManifestHits)));
  line("manifest misses", number(value(cache::Counter::ManifestMisses)));
  line("compiles", number(value(cache::Counter::Compiles)));
  line("corrupt entries found", number(value(cache::Counter::Corrupt)));
  line("evictions", number(value(cache::Counter::Evictions)));
  line("write errors", number(value(cache::Counter::WriteErrors)));
  line("lock timeouts", number(value(cache::Counter::LockTimeouts)));
  line("bytes read", cache::formatSize(value(cache::Counter::BytesRead)));
  line("bytes written", cache::formatSize(value(cache::Counter::BytesWritten)));
  line("entries",
       number(entries.size()) + " (" + number(artifacts) + " kernels, " +
           number(manifests) + " manifests" +
           (records ? ", " + number(records) + " tuning records" : "") +
           (invalid ? ", " + number(invalid) + " invalid" : "") + ")");
  line("size", cache::formatSize(bytes) + " of " +
                   (maxSize ? cache::formatSize(maxSize) : "no limit"));
  // The fleet cache's counters (docs/RemoteCache.md).
  line("remote hits", number(value(cache::Counter::RemoteHits)));
  line("remote misses", number(value(cache::Counter::RemoteMisses)));
  line("remote skipped", number(value(cache::Counter::RemoteSkipped)));
  line("remote errors", number(value(cache::Counter::RemoteErrors)));
  line("remote timeouts", number(value(cache::Counter::RemoteTimeouts)));
  line("remote rejected", number(value(cache::Counter::RemoteVerifyFailures)) +
                              " (failed verification)");
  line("remote puts", number(value(cache::Counter::RemotePuts)));
  line("remote dropped", number(value(cache::Counter::RemoteDropped)));
  line("remote bytes read",
       cache::formatSize(value(cache::Counter::RemoteBytesRead)));
  line("remote bytes written",
       cache::formatSize(value(cache::Counter::RemoteBytesWritten)));
  return 0;
}

int list(const Options &options) {
  std::unique_ptr<cache::DiskCache> disk =
      openCache(options.dir, Access::Inspect);
  std::vector<cache::Listing> entries;
  if (disk)
    entries = disk->list();
  std::string out;
  JsonWriter json(out);
  json.beginArray();
  for (const cache::Listing &entry : entries) {
    absl::StatusOr<cache::EntryData> data = disk->read(entry.key);
    std::string kind = data.ok() ? cache::kindName(data->kind) : "invalid";
    std::string what =
        data.ok() ? describe(*data) : std::string(data.status().message());
    if (options.json) {
      json.beginObject()
          .key("key")
          .string(entry.key)
          .key("kind")
          .string(kind)
          .key("size")
          .integer(entry.size)
          .key("last_use_ns")
          .integer(entry.mtimeNanos)
          .key("holds")
          .string(what)
          .endObject();
      continue;
    }
    std::printf("%s  %-8s %9s  %s  %s\n", entry.key.c_str(), kind.c_str(),
                cache::formatSize(entry.size).c_str(),
                formatTime(entry.mtimeNanos).c_str(), what.c_str());
  }
  json.endArray();
  if (options.json)
    std::printf("%s\n", out.c_str());
  return 0;
}

int show(const Options &options) {
  const std::string &prefix = options.key;
  std::unique_ptr<cache::DiskCache> disk =
      openCache(options.dir, Access::Inspect);
  std::vector<std::string> matches;
  if (disk)
    for (const cache::Listing &entry : disk->list())
      if (entry.key.compare(0, prefix.size(), prefix) == 0)
        matches.push_back(entry.key);
  if (matches.empty())
    fatal("no entry whose key starts with '" + prefix + "'");
  if (matches.size() > 1)
    fatal("'" + prefix + "' starts " + std::to_string(matches.size()) +
          " keys; give more digits");
  const std::string &key = matches[0];
  cache::EntryHeader header;
  absl::StatusOr<cache::EntryData> entry = disk->read(key, &header);
  if (!entry.ok()) {
    std::fprintf(stderr, "kjit-cache: %s is invalid: %s\n",
                 disk->entryPath(key).c_str(),
                 std::string(entry.status().message()).c_str());
    return 1;
  }
  if (options.json) {
    std::string out;
    JsonWriter json(out);
    json.beginObject()
        .key("key")
        .string(key)
        .key("path")
        .string(disk->entryPath(key))
        .key("kind")
        .string(cache::kindName(entry->kind))
        .key("format_version")
        .integer(header.version)
        .key("created_ns")
        .integer(entry->createdNanos)
        .key("compressed")
        .boolean(header.flags & cache::kFlagZstd)
        .key("stored_size")
        .integer(header.storedSize)
        .key("payload_size")
        .integer(header.payloadSize)
        .key("metadata");
    if (kjit::rt::parseJson(entry->metadata).ok())
      json.raw(entry->metadata);
    else
      json.string(entry->metadata);
    json.endObject();
    std::printf("%s\n", out.c_str());
    return 0;
  }
  std::printf("key          %s\n", key.c_str());
  std::printf("path         %s\n", disk->entryPath(key).c_str());
  std::printf("kind         %s: %s\n", cache::kindName(entry->kind),
              describe(*entry).c_str());
  std::printf("format       version %u, %s\n", header.version,
              header.flags & cache::kFlagZstd ? "zstd-compressed"
                                              : "uncompressed");
  std::printf("created      %s\n", formatTime(entry->createdNanos).c_str());
  std::printf("sizes        %llu metadata + %llu payload bytes, %llu stored\n",
              (unsigned long long)header.metadataSize,
              (unsigned long long)header.payloadSize,
              (unsigned long long)header.storedSize);
  std::printf("metadata     %s\n", entry->metadata.c_str());
  return 0;
}

int verify(const Options &options) {
  bool remove = options.remove;
  std::unique_ptr<cache::DiskCache> disk =
      openCache(options.dir, remove ? Access::Maintain : Access::Inspect);
  std::vector<cache::Listing> entries;
  if (disk)
    entries = disk->list();
  std::string out;
  JsonWriter json(out);
  json.beginObject().key("bad").beginArray();
  uint64_t bad = 0;
  for (const cache::Listing &entry : entries) {
    absl::StatusOr<cache::EntryData> data = disk->read(entry.key);
    if (data.ok())
      continue;
    ++bad;
    std::string why(data.status().message());
    bool removed = false;
    if (remove) {
      disk->reject(entry.key, why); // counted as corrupt, removed if it can be
      struct stat st;
      removed = ::lstat(disk->entryPath(entry.key).c_str(), &st) != 0 &&
                errno == ENOENT;
    }
    if (options.json)
      json.beginObject()
          .key("key")
          .string(entry.key)
          .key("problem")
          .string(why)
          .endObject();
    else
      std::printf("bad: %s: %s%s\n", disk->entryPath(entry.key).c_str(),
                  why.c_str(),
                  !remove   ? ""
                  : removed ? " (removed)"
                            : " (could not be removed)");
  }
  json.endArray()
      .key("entries")
      .integer(entries.size())
      .key("ok")
      .integer(entries.size() - bad)
      .endObject();
  if (options.json)
    std::printf("%s\n", out.c_str());
  else
    std::printf(
        "%llu entries, %llu ok, %llu bad\n", (unsigned long long)entries.size(),
        (unsigned long long)(entries.size() - bad), (unsigned long long)bad);
  return bad ? 1 : 0;
}

int prune(const Options &options) {
  const std::optional<uint64_t> &maxSize = options.maxSize;
  int64_t staleAge = options.staleAge;
  std::unique_ptr<cache::DiskCache> disk =
      openCache(options.dir, Access::Maintain);
  cache::DiskCache::PruneResult result;
  uint64_t cap =
      maxSize ? *maxSize
              : (disk ? disk->options().maxSize : cache::kDefaultMaxSize);
  if (disk)
    result = disk->prune(cap, staleAge, /*wait=*/true);
  if (!result.ran)
    fatal("nothing was pruned: " + result.problem);
  if (options.json) {
    std::string out;
    JsonWriter json(out);
    json.beginObject()
        .key("max_size")
        .integer(cap)
        .key("evicted")
        .integer(result.evicted)
        .key("evicted_bytes")
        .integer(result.evictedBytes)
        .key("kept")
        .integer(result.keptEntries)
        .key("kept_bytes")
        .integer(result.keptBytes)
        .key("stale_temporaries")
        .integer(result.staleTemporaries)
        .key("stale_locks")
        .integer(result.staleLocks)
        .endObject();
    std::printf("%s\n", out.c_str());
    return 0;
  }
  std::printf("evicted %llu entries (%s); kept %llu (%s of %s); removed %llu "
              "stale temporary and %llu stale lock files\n",
              (unsigned long long)result.evicted,
              cache::formatSize(result.evictedBytes).c_str(),
              (unsigned long long)result.keptEntries,
              cache::formatSize(result.keptBytes).c_str(),
              cache::formatSize(cap).c_str(),
              (unsigned long long)result.staleTemporaries,
              (unsigned long long)result.staleLocks);
  return 0;
}

int clear(const Options &options) {
  std::unique_ptr<cache::DiskCache> disk =
      openCache(options.dir, Access::Maintain);
  uint64_t removed = 0;
  if (disk) {
    absl::StatusOr<uint64_t> cleared =
        options.tuning ? disk->clear([](cache::EntryKind kind) {
          return kind == cache::EntryKind::Tuning ||
                 kind == cache::EntryKind::Choice;
        })
                       : disk->clear();
    if (!cleared.ok())
      fatal(std::string(cleared.status().message()));
    removed = *cleared;
  }
  if (options.json)
    std::printf("{\"removed\":%llu}\n", (unsigned long long)removed);
  else
    std::printf("removed %llu %s from %s\n", (unsigned long long)removed,
                options.tuning ? "tuning records" : "entries",
                options.dir.c_str());
  return 0;
}

int env(const Options &options) {
  if (options.json) {
    std::string out;
    JsonWriter json(out);
    json.beginObject().key("codegen").beginArray();
    for (const std::string &name : cache::codegenEnvironment())
      json.string(name);
    json.endArray().key("neutral").beginArray();
    for (const std::string &name : cache::neutralEnvironment())
      json.string(name);
    json.endArray().endObject();
    std::printf("%s\n", out.c_str());
    return 0;
  }
  std::printf("in every kernel's key:");
  for (const std::string &name : cache::codegenEnvironment())
    std::printf(" %s", name.c_str());
  std::printf("\nnot in the key:");
  for (const std::string &name : cache::neutralEnvironment())
    std::printf(" %s", name.c_str());
  std::printf("\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parse(argc, argv);
  if (options.command == "stats")
    return stats(options);
  if (options.command == "list")
    return list(options);
  if (options.command == "show")
    return show(options);
  if (options.command == "verify")
    return verify(options);
  if (options.command == "prune")
    return prune(options);
  if (options.command == "clear")
    return clear(options);
  return env(options);
}
