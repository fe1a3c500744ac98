//===- tamper.cpp - forge bad fleet cache values for the tests ------------===//
//
//   kjit-remote-tamper MODE SECRET-FILE STORE-KEY-HEX IN OUT
//
// Reads a value the runtime published (IN, stored under the store key whose
// hex digits name the file), and writes a forged one to OUT:
//   bad-hmac  the kernel's bytes replaced by "EVILEVIL..." (a well-formed
//             entry), sealed with another secret
//   digest    the payload's last byte flipped (the header and MAC intact)
//   version   the envelope version set to 0 (an older kjit)
// A test plants OUT in the store and checks that the runtime rejects it and
// that "EVILEVIL" reaches neither the disk cache nor the loader.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/EntryFormat.h"
#include "kjit/Cache/RemoteEnvelope.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using namespace kjit::cache;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::cerr << "kjit-remote-tamper: " << message << "\n";
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

std::string fromHex(const std::string &hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 6)
    die("usage: kjit-remote-tamper bad-hmac|digest|version SECRET-FILE "
        "STORE-KEY-HEX IN OUT");
  std::string mode = argv[1];
  auto secret = readSecretFile(argv[2]);
  if (!secret.ok())
    die(std::string(secret.status().message()));
  std::string key = fromHex(argv[3]);
  std::string value = readFile(argv[4]);
  auto opened = openEnvelope(*secret, key, value);
  if (!opened.ok())
    die("IN is not a valid value: " + std::string(opened.status().message()));
  std::string forged;
  if (mode == "bad-hmac") {
    auto entry = decodeEntry(opened->payload);
    if (!entry.ok())
      die("IN holds no entry: " + std::string(entry.status().message()));
    entry->payload.clear();
    for (int i = 0; i < 25; ++i)
      entry->payload += "EVILEVIL";
    forged = sealEnvelope("not the fleet's secret, a forger's", key, "forger",
                          encodeEntry(*entry, /*compress=*/false));
  } else if (mode == "digest") {
    forged = value;
    forged.back() ^= 0x5a;
  } else if (mode == "version") {
    forged = value;
    forged[8] = 0;
  } else {
    die("unknown mode '" + mode + "'");
  }
  std::ofstream out(argv[5], std::ios::binary);
  out << forged;
  return out ? 0 : 1;
}
