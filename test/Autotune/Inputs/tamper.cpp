//===- tamper.cpp - forge autotuner records for the tests -----------------===//
//
//   kjit-tuning-tamper IN OUT [REGEX REPLACEMENT]
//   kjit-tuning-tamper --fleet SECRET-FILE STORE-KEY IN OUT REGEX REPLACEMENT
//
// Reads a disk cache entry (IN, a file the runtime wrote), replaces what
// REGEX matches in its metadata by REPLACEMENT (ECMAScript syntax), and
// writes it as a valid entry (header, key echo, checksum) under the key
// OUT's file name gives. With --fleet, IN is a value the runtime published
// under STORE-KEY (without the store's namespace): it is opened with the
// fleet's secret, changed, and sealed again with that secret under the
// same key. A test plants OUT where the runtime looks: a record that passes
// every check of the file format (and of the envelope), so that the
// runtime's checks of what the record claims (its metadata echo, its
// bounds) are reached.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/EntryFormat.h"
#include "kjit/Cache/RemoteEnvelope.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

using namespace kjit::cache;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::cerr << "kjit-tuning-tamper: " << message << "\n";
  std::exit(1);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read " + path);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

} // namespace

/// The metadata of `entry` with REGEX's matches replaced.
void change(EntryData &entry, const char *regex, const char *replacement) {
  std::string changed = std::regex_replace(entry.metadata, std::regex(regex),
                                           std::string(replacement));
  if (changed == entry.metadata)
    die(std::string("nothing matches '") + regex + "' in " + entry.metadata);
  entry.metadata = changed;
}

int fleet(char **argv) {
  auto secret = readSecretFile(argv[2]);
  if (!secret.ok())
    die(std::string(secret.status().message()));
  std::string key = argv[3];
  auto opened = openEnvelope(*secret, key, readFile(argv[4]));
  if (!opened.ok())
    die("IN is not a valid value: " + std::string(opened.status().message()));
  auto entry = decodeEntry(opened->payload);
  if (!entry.ok())
    die("IN holds no entry: " + std::string(entry.status().message()));
  change(*entry, argv[6], argv[7]);
  std::ofstream out(argv[5], std::ios::binary);
  out << sealEnvelope(*secret, key, opened->writerId, encodeEntry(*entry));
  return out ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 8 && std::string(argv[1]) == "--fleet")
    return fleet(argv);
  if (argc != 3 && argc != 5)
    die("usage: kjit-tuning-tamper IN OUT [REGEX REPLACEMENT] | --fleet "
        "SECRET-FILE STORE-KEY IN OUT REGEX REPLACEMENT");
  auto entry = decodeEntry(readFile(argv[1]));
  if (!entry.ok())
    die(std::string(entry.status().message()));
  std::string out = argv[2];
  entry->key = out.substr(out.rfind('/') + 1);
  if (!isValidKey(entry->key))
    die("'" + entry->key + "' is not a key");
  if (argc == 5)
    change(*entry, argv[3], argv[4]);
  std::remove(out.c_str());
  std::ofstream file(out, std::ios::binary);
  file << encodeEntry(*entry);
  if (!file)
    die("cannot write " + out);
  return 0;
}
