//===- tamper.cpp - forge autotuner records for the tests -----------------===//
//
//   kjit-tuning-tamper IN OUT [REGEX REPLACEMENT]
//
// Reads a disk cache entry (IN, a file the runtime wrote), replaces what
// REGEX matches in its metadata by REPLACEMENT (ECMAScript syntax), and
// writes it as a valid entry (header, key echo, checksum) under the key
// OUT's file name gives. A test plants OUT where the runtime looks: a record
// that passes every check of the file format, so that the runtime's checks
// of what the record claims (its metadata echo, its bounds) are reached.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/EntryFormat.h"

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

int main(int argc, char **argv) {
  if (argc != 3 && argc != 5)
    die("usage: kjit-tuning-tamper IN OUT [REGEX REPLACEMENT]");
  auto entry = decodeEntry(readFile(argv[1]));
  if (!entry.ok())
    die(std::string(entry.status().message()));
  std::string out = argv[2];
  entry->key = out.substr(out.rfind('/') + 1);
  if (!isValidKey(entry->key))
    die("'" + entry->key + "' is not a key");
  if (argc == 5) {
    std::string changed = std::regex_replace(
        entry->metadata, std::regex(argv[3]), std::string(argv[4]));
    if (changed == entry->metadata)
      die(std::string("nothing matches '") + argv[3] + "' in " +
          entry->metadata);
    entry->metadata = changed;
  }
  std::remove(out.c_str());
  std::ofstream file(out, std::ios::binary);
  file << encodeEntry(*entry);
  if (!file)
    die("cannot write " + out);
  return 0;
}
