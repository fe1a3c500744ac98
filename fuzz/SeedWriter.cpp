//===- SeedWriter.cpp - the fuzzers' seed corpora, from the real writers --===//
//
//   seed-writer DIR   writes DIR/entry/* and DIR/manifest/*
//
// Seeds made by encodeEntry, manifestToJson and the binder's records rather
// than by hand, so that they stay what kjit writes; a few broken ones beside
// them start the fuzzer on the reader's error paths. run-fuzzers.sh does not
// run it: its output is checked in under fuzz/corpus (with real entries of a
// warm cache beside it), and it is rerun when a format changes.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/EntryFormat.h"
#include "kjit/Model/Binder.h"
#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace kjit;
using namespace kjit::cache;
using namespace kjit::rt;

namespace {

std::string dir;

void write(const std::string &name, const std::string &bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "seed-writer: cannot write %s/%s\n", dir.c_str(),
                 name.c_str());
    std::exit(1);
  }
}

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "seed-writer: %s\n", what.c_str());
  std::exit(1);
}

KernelParam param(std::string name, ParamType type = ParamType::any()) {
  KernelParam p;
  p.name = std::move(name);
  p.type = type;
  return p;
}

void entries() {
  const std::string key(64, 'a');
  EntryData manifest;
  manifest.kind = EntryKind::Manifest;
  manifest.key = key;
  manifest.createdNanos = 1700000000000000000;
  manifest.metadata = R"({"source":"k.mlir","kernels":[],"globals":[]})";
  write("manifest-small", encodeEntry(manifest));

  EntryData artifact;
  artifact.kind = EntryKind::Artifact;
  artifact.key = std::string(32, '0') + std::string(32, 'f');
  artifact.createdNanos = 1;
  artifact.metadata = R"({"kernel":"add","target":"host","arch":"x86_64"})";
  // Compressible: stored as a zstd frame.
  for (int i = 0; i < 512; ++i)
    artifact.payload += "\x7f"
                        "ELF" +
                        std::to_string(i % 7);
  std::string zstd = encodeEntry(artifact);
  write("artifact-zstd", zstd);
  write("artifact-raw", encodeEntry(artifact, /*compress=*/false));
  // Incompressible: stored as it is though its size is in zstd's range.
  artifact.payload.clear();
  uint32_t x = 12345;
  for (int i = 0; i < 1500; ++i) {
    x = x * 1103515245 + 12345;
    artifact.payload += char(x >> 24);
  }
  write("artifact-random", encodeEntry(artifact));

  EntryData empty;
  empty.key = key;
  write("empty-body", encodeEntry(empty));

  // Broken: what the reader must refuse.
  std::string bytes = encodeEntry(manifest);
  write("broken-truncated", bytes.substr(0, bytes.size() - 5));
  write("broken-header-only", bytes.substr(0, kHeaderSize));
  std::string magic = bytes;
  magic[1] = 'X';
  fixChecksum(magic);
  write("broken-magic", magic);
  std::string version = bytes;
  version[8] = 2;
  fixChecksum(version);
  write("broken-version", version);
  std::string flipped = bytes;
  flipped[kHeaderSize + 3] ^= 0x20;
  write("broken-checksum", flipped);
  std::string frame = zstd;
  frame[kHeaderSize + 8] ^= 0x55;
  fixChecksum(frame);
  write("broken-zstd-frame", frame);
  write("broken-extended", bytes + "x");
}

void manifests() {
  KernelManifest add;
  add.name = "add";
  KernelParam x = param("x", ParamType::pointer(DType::FP32));
  x.isConst = true;
  KernelParam block = param("BLOCK", ParamType::scalar(DType::I32));
  block.isConstexpr = true;
  block.defaultValue = Argument::integer(1024);
  add.params = {x, param("out", ParamType::pointer(DType::FP16)),
                param("n", ParamType::scalar(DType::I32)), block};
  write("manifest-add", manifestToJson(add));

  KernelManifest mixed;
  mixed.name = "mixed";
  KernelParam p = param("p", ParamType::pointer(DType::BF16));
  p.doNotSpecializeOnAlignment = true;
  KernelParam n = param("n", ParamType::scalar(DType::I64));
  n.doNotSpecialize = true;
  KernelParam scale = param("scale", ParamType::scalar(DType::FP32));
  scale.defaultValue = Argument::fp(0.5);
  KernelParam flag = param("flag", ParamType::scalar(DType::I1));
  flag.defaultValue = Argument::boolean(true);
  KernelParam opt = param("opt");
  opt.defaultValue = Argument::none();
  mixed.params = {p, n, param("a"), scale, flag, opt};
  write("manifest-mixed", manifestToJson(mixed));
  KernelManifest none;
  none.name = "empty";
  write("manifest-no-params", manifestToJson(none));
  for (const KernelManifest *m : {&add, &mixed, &none})
    if (!manifestFromJson(manifestToJson(*m)).ok())
      fail("a seed manifest does not read back");

  // Specialization records, made as the binder makes them.
  absl::StatusOr<BindPlan> plan = BindPlan::create(add);
  if (!plan.ok())
    fail(std::string(plan.status().message()));
  Binding b = plan->makeBinding();
  std::vector<Argument> args = {Argument::tensor(0x1000, DType::FP32, true),
                                Argument::tensor(0x2008, DType::FP16),
                                Argument::integer(1)};
  if (absl::Status s = plan->bind(args, {}, b); !s.ok())
    fail(std::string(s.message()));
  SpecializationRecord record = plan->makeRecord(b);
  record.target = "host";
  record.arch = "x86_64";
  record.sourceHash = std::string(64, 'c');
  std::string json = toJson(record);
  if (!specializationFromJson(json).ok())
    fail("the seed record does not read back");
  write("record-add", json);

  // Broken.
  write("broken-version", R"({"version":2,"name":"k","params":[]})");
  write("broken-type",
        R"({"version":1,"name":"k","params":[{"name":"x","type":"fp33",)"
        R"("constexpr":false,"do_not_specialize":false,)"
        R"("do_not_specialize_on_alignment":false,"const":false}]})");
  write("broken-unterminated", R"({"version":1,"name":"k\u00e9","params":[)");
  write("broken-numbers", R"([1e999,-0,0x10,1.5e-400,-9223372036854775809])");
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: seed-writer DIR\n");
    return 2;
  }
  dir = std::string(argv[1]) + "/entry";
  entries();
  dir = std::string(argv[1]) + "/manifest";
  manifests();
  return 0;
}
