//===- NpyTest.cpp - kjit-run's .npy files --------------------------------===//

#include "Npy.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

using kjit::rt::DType;
using namespace kjit::run;

namespace {

class Npy : public testing::Test {
protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "kjit-run-npy-" + std::to_string(::getpid()) +
           "-" + testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string command = "mkdir -p '" + dir_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir_ + "'";
    (void)std::system(command.c_str());
  }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  /// Writes `bytes` to a new file and returns its path.
  std::string writeRaw(const std::string &name, const std::string &bytes) {
    std::string file = path(name);
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good());
    return file;
  }

  /// The message of reading `bytes` as a .npy file, after the file name.
  std::string readError(const std::string &bytes,
                        std::optional<DType> expected = std::nullopt) {
    std::string file = writeRaw("bad.npy", bytes);
    absl::StatusOr<HostBuffer> buffer = readNpy(file, expected);
    if (buffer.ok())
      return "";
    std::string prefix = "npy file '" + file + "': ";
    std::string message(buffer.status().message());
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    return message.substr(prefix.size());
  }

  std::string dir_;
};

/// A .npy file: preamble of format `major`.0, header text `dict` padded to
/// a multiple of 64 with a final newline, then `data`.
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1) {
  size_t preamble = major == 1 ? 10 : 12;
  size_t header = (preamble + dict.size() + 1 + 63) / 64 * 64 - preamble;
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i)
    out += static_cast<char>((header >> (8 * i)) & 0xff);
  out += dict;
  out.append(header - dict.size() - 1, ' ');
  out += '\n';
  return out + data;
}

std::string f32Dict(const std::string &shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float value : values)
    out.append(reinterpret_cast<const char *>(&value), sizeof(value));
  return out;
}

HostBuffer make(DType dtype, Shape shape) {
  return HostBuffer::allocate(dtype, std::move(shape)).value();
}

bool sameBytes(const HostBuffer &a, const HostBuffer &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         a.sizeInBytes() == b.sizeInBytes() &&
         std::memcmp(a.data(), b.data(), a.sizeInBytes()) == 0;
}

//===----------------------------------------------------------------------===//
// Writing and round trips
//===----------------------------------------------------------------------===//

TEST_F(Npy, WritesWhatNumpyWrites) {
  HostBuffer buffer = make(DType::FP32, {3});
  fillArange(buffer);
  absl::StatusOr<std::string> encoded = encodeNpy(buffer);
  ASSERT_TRUE(encoded.ok());
  // numpy.save(f, np.arange(3, dtype=np.float32)), byte for byte.
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(3,), }" +
                         std::string(60, ' ') + "\n" + floats({0, 1, 2});
  EXPECT_EQ(*encoded, expected);
  EXPECT_EQ((encoded->size() - 12) % 64, 0u);

  HostBuffer matrix = make(DType::I1, {2, 3});
  std::string text = encodeNpy(matrix).value();
  EXPECT_NE(text.find("{'descr': '|b1', 'fortran_order': False, 'shape': "
                      "(2, 3), }"),
            std::string::npos);
  HostBuffer scalar = make(DType::BF16, {});
  text = encodeNpy(scalar).value();
  EXPECT_NE(text.find("{'descr': '<u2', 'fortran_order': False, 'shape': (), "
                      "}"),
            std::string::npos);
}

TEST_F(Npy, DescrTable) {
  struct Case {
    DType dtype;
    const char *descr;
  };
  const Case cases[] = {
      {DType::I1, "|b1"},   {DType::I8, "|i1"},   {DType::I16, "<i2"},
      {DType::I32, "<i4"},  {DType::I64, "<i8"},  {DType::U8, "|u1"},
      {DType::U16, "<u2"},  {DType::U32, "<u4"},  {DType::U64, "<u8"},
      {DType::FP16, "<f2"}, {DType::BF16, "<u2"}, {DType::FP32, "<f4"},
      {DType::FP64, "<f8"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(npyDescr(c.dtype), c.descr);
    EXPECT_EQ(dtypeOfNpyDescr(c.descr, c.dtype).value(), c.dtype);
  }
  // numpy has no fp8 dtype.
  for (DType fp8 : {DType::FP8E4NV, DType::FP8E5, DType::FP8E4B15,
                    DType::FP8E4B8, DType::FP8E5B16})
    EXPECT_EQ(npyDescr(fp8), "") << kjit::rt::canonicalName(fp8);
  // Other byte-order marks numpy may write.
  EXPECT_EQ(dtypeOfNpyDescr("=f4", std::nullopt).value(), DType::FP32);
  EXPECT_EQ(dtypeOfNpyDescr("<u1", std::nullopt).value(), DType::U8);
  EXPECT_EQ(dtypeOfNpyDescr(">u1", std::nullopt).value(), DType::U8);
  EXPECT_EQ(dtypeOfNpyDescr("<u2", std::nullopt).value(), DType::U16);
}

TEST_F(Npy, RoundTripsEveryDType) {
  const DType dtypes[] = {DType::I1,  DType::I8,   DType::I16,  DType::I32,
                          DType::I64, DType::U8,   DType::U16,  DType::U32,
                          DType::U64, DType::FP16, DType::BF16, DType::FP32,
                          DType::FP64};
  const Shape shapes[] = {{7}, {2, 3}, {}, {0}, {2, 0, 3}};
  int file = 0;
  for (DType dtype : dtypes) {
    for (const Shape &shape : shapes) {
      HostBuffer buffer = make(dtype, shape);
      fillRandom(buffer, static_cast<uint64_t>(file));
      std::string name = path("f" + std::to_string(file++) + ".npy");
      ASSERT_TRUE(writeNpy(name, buffer).ok());
      absl::StatusOr<HostBuffer> back = readNpy(name, dtype);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_TRUE(sameBytes(*back, buffer))
          << kjit::rt::canonicalName(dtype) << formatShape(shape);
    }
  }
}

TEST_F(Npy, LargeHeaderUsesVersion2) {
  // 25000 dimensions of 1 make a header longer than 1.0's 16-bit length
  // allows; numpy then writes 2.0, and so does encodeNpy.
  Shape shape(25000, 1);
  HostBuffer buffer = make(DType::U8, shape);
  std::string text = encodeNpy(buffer).value();
  EXPECT_EQ(text[6], '\x02');
  EXPECT_EQ((text.size() - 1) % 64, 0u); // one byte of data after the header
  std::string name = path("wide.npy");
  ASSERT_TRUE(writeNpy(name, buffer).ok());
  absl::StatusOr<HostBuffer> back = readNpy(name);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape(), shape);
}

TEST_F(Npy, ReadsOtherVersionsAndSpellings) {
  std::string data = floats({1.5f, -2});
  for (int major : {1, 2, 3}) {
    std::string file = writeRaw("v" + std::to_string(major) + ".npy",
                                npyBytes(f32Dict("(2,)"), data, major));
    absl::StatusOr<HostBuffer> buffer = readNpy(file);
    ASSERT_TRUE(buffer.ok()) << major << ": " << buffer.status();
    EXPECT_EQ(formatBuffer(*buffer), "fp32[2] [1.5, -2]");
  }
  // Key order, quotes, spacing and the trailing comma are free.
  std::string file = writeRaw(
      "spelling.npy",
      npyBytes("{\"shape\":(1,2),\"fortran_order\":False,\"descr\":\"<f4\"}",
               data));
  absl::StatusOr<HostBuffer> buffer = readNpy(file);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ(buffer->shape(), (Shape{1, 2}));
  file = writeRaw("scalar.npy", npyBytes(f32Dict("()"), floats({4})));
  EXPECT_EQ(formatBuffer(readNpy(file).value()), "fp32[] [4]");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(Npy, FileErrors) {
  std::string missing = path("missing.npy");
  EXPECT_EQ(readNpy(missing).status().message(),
            "npy file '" + missing +
                "': cannot open: No such file or directory");
  EXPECT_EQ(readNpy(dir_).status().message(),
            "npy file '" + dir_ + "': not a regular file");
  std::string unwritable = path("no/such/dir/out.npy");
  EXPECT_EQ(writeNpy(unwritable, make(DType::FP32, {1})).message(),
            "npy file '" + unwritable +
                "': cannot create: No such file or directory");
  std::string fp8 = path("fp8.npy");
  EXPECT_EQ(writeNpy(fp8, make(DType::FP8E5, {1})).message(),
            "npy file '" + fp8 +
                "': fp8e5 has no numpy dtype; it cannot be saved as .npy");
  EXPECT_EQ(encodeNpy(make(DType::FP8E4NV, {1})).status().message(),
            "fp8e4nv has no numpy dtype; it cannot be saved as .npy");
}

TEST_F(Npy, PreambleErrors) {
  const std::string notNpy =
      "not a .npy file (it does not start with \"\\x93NUMPY\")";
  EXPECT_EQ(readError(""), notNpy);
  EXPECT_EQ(readError("\x93NUMPY"), notNpy);
  EXPECT_EQ(readError("PK\x03\x04 a zip archive"), notNpy);
  std::string good = npyBytes(f32Dict("(2,)"), floats({1, 2}));
  std::string v4 = good;
  v4[6] = 4;
  EXPECT_EQ(readError(v4),
            "unsupported format version 4.0 (kjit-run reads 1.0, 2.0 and 3.0)");
  std::string v11 = good;
  v11[7] = 1;
  EXPECT_EQ(readError(v11),
            "unsupported format version 1.1 (kjit-run reads 1.0, 2.0 and 3.0)");
  EXPECT_EQ(readError(std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11)),
            "truncated: the file ends inside the preamble");
  // A header length far beyond the file: refused before anything is read.
  std::string huge = good;
  huge[8] = '\xff';
  huge[9] = '\xff';
  EXPECT_EQ(readError(huge), "truncated: the header length (65535 bytes) "
                             "runs past the end of the file (" +
                                 std::to_string(good.size()) + " bytes)");
  std::string huge2 = npyBytes(f32Dict("(2,)"), floats({1, 2}), 2);
  huge2[8] = huge2[9] = huge2[10] = huge2[11] = '\xff';
  EXPECT_EQ(readError(huge2), "truncated: the header length (4294967295 "
                              "bytes) runs past the end of the file (" +
                                  std::to_string(huge2.size()) + " bytes)");
}

TEST_F(Npy, HeaderErrors) {
  auto headerError = [&](const std::string &dict) {
    return readError(npyBytes(dict, floats({1, 2})));
  };
  EXPECT_EQ(headerError("hello"),
            "malformed header: expected a dict literal '{...}'");
  EXPECT_EQ(headerError("{descr: '<f4'}"),
            "malformed header: expected a quoted key");
  EXPECT_EQ(headerError("{'descr' '<f4'}"),
            "malformed header: expected ':' after 'descr'");
  EXPECT_EQ(headerError("{'descr': '<f4' 'shape': (2,)}"),
            "malformed header: expected ',' or '}' after a value");
  EXPECT_EQ(headerError("{'descr': [('a', '<f4')], 'fortran_order': False, "
                        "'shape': (2,)}"),
            "malformed header: 'descr' is not a type string (structured "
            "dtypes are not supported)");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}"),
            "malformed header: 'fortran_order' is neither True nor False");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': 2}"),
            "malformed header: 'shape' is not a tuple");
  EXPECT_EQ(
      headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}"),
      "malformed header: 'shape' holds something other than a non-negative "
      "integer");
  EXPECT_EQ(
      headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2}"),
      "malformed header: 'shape' tuple is not closed");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(99999999999999999999,)}"),
            "malformed header: 'shape' holds an extent past 2^63-1");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(2,), 'extra': 1}"),
            "malformed header: unexpected key 'extra'");
  EXPECT_EQ(headerError("{'descr': '<f4', 'descr': '<f4', 'fortran_order': "
                        "False, 'shape': (2,)}"),
            "malformed header: 'descr' appears twice");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': False, "
                        "'fortran_order': False, 'shape': (2,)}"),
            "malformed header: 'fortran_order' appears twice");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(2,), 'shape': (2,)}"),
            "malformed header: 'shape' appears twice");
  EXPECT_EQ(headerError("{'fortran_order': False, 'shape': (2,)}"),
            "malformed header: no 'descr' key");
  EXPECT_EQ(headerError("{'descr': '<f4', 'shape': (2,)}"),
            "malformed header: no 'fortran_order' key");
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': False}"),
            "malformed header: no 'shape' key");
  EXPECT_EQ(headerError(f32Dict("(2,)") + " x"),
            "malformed header: text after the dict literal");
  EXPECT_EQ(headerError("{'descr': '<f\\x34', 'fortran_order': False, "
                        "'shape': (2,)}"),
            "malformed header: 'descr' is not a type string (structured "
            "dtypes are not supported)");
}

TEST_F(Npy, DTypeAndLayoutErrors) {
  auto withDescr = [&](const std::string &descr) {
    return readError(npyBytes("{'descr': '" + descr +
                                  "', 'fortran_order': False, 'shape': (2,)}",
                              floats({1, 2})));
  };
  EXPECT_EQ(withDescr(">f4"),
            "big-endian data ('>f4') is not supported; convert it with "
            "a.astype(a.dtype.newbyteorder('<'))");
  const std::string supported =
      "' (kjit-run reads bool, int8-64, uint8-64, float16, float32 and "
      "float64)";
  EXPECT_EQ(withDescr("<c8"), "unsupported dtype '<c8" + supported);
  EXPECT_EQ(withDescr("|f4"), "unsupported dtype '|f4" + supported);
  EXPECT_EQ(withDescr("<U1"), "unsupported dtype '<U1" + supported);
  EXPECT_EQ(withDescr("|O"), "unsupported dtype '|O" + supported);
  EXPECT_EQ(withDescr("f4"), "unsupported dtype 'f4" + supported);
  EXPECT_EQ(readError(npyBytes("{'descr': '<f4', 'fortran_order': True, "
                               "'shape': (2,)}",
                               floats({1, 2}))),
            "fortran_order is True; kjit-run reads C-order arrays only (save "
            "np.ascontiguousarray(a))");
}

TEST_F(Npy, DataSizeErrors) {
  EXPECT_EQ(readError(npyBytes(f32Dict("(3,)"), floats({1, 2}))),
            "truncated: shape [3] of '<f4' needs 12 data bytes, but the file "
            "holds 8");
  EXPECT_EQ(readError(npyBytes(f32Dict("(1,)"), floats({1, 2}))),
            "corrupt: shape [1] of '<f4' needs 4 data bytes, but the file "
            "holds 8");
  // A huge shape is compared with the file size, never allocated.
  EXPECT_EQ(readError(npyBytes(f32Dict("(1099511627776,)"), "")),
            "truncated: shape [1099511627776] of '<f4' needs 4398046511104 "
            "data bytes, but the file holds 0");
  EXPECT_EQ(
      readError(npyBytes(f32Dict("(4611686018427387904, 4)"), floats({1}))),
      "shape [4611686018427387904,4] is too large");
  // The element count fits in int64_t; the byte count does not.
  EXPECT_EQ(readError(npyBytes("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (2305843009213693952,)}",
                               "")),
            "shape [2305843009213693952] is too large");
  EXPECT_EQ(readError(npyBytes("{'descr': '|b1', 'fortran_order': False, "
                               "'shape': (3,)}",
                               std::string("\x01\x05\x00", 3))),
            "corrupt: bool element 1 is 5, not 0 or 1");
}

// Every prefix of a valid file, and every single-byte corruption of its
// header, is either read or refused with a message; none crashes.
TEST_F(Npy, TruncationsAndCorruptionsNeverCrash) {
  HostBuffer buffer = make(DType::I16, {3, 5});
  fillArange(buffer);
  std::string good = encodeNpy(buffer).value();
  for (size_t length = 0; length < good.size(); ++length) {
    std::string message = readError(good.substr(0, length));
    EXPECT_FALSE(message.empty()) << length;
  }
  SplitMix64 generator(1);
  size_t headerEnd = good.size() - buffer.sizeInBytes();
  int refused = 0;
  for (size_t at = 0; at < headerEnd; ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(generator.next() & 0xff);
    if (bad[at] == good[at])
      continue;
    std::string file = writeRaw("fuzz.npy", bad);
    absl::StatusOr<HostBuffer> read = readNpy(file);
    if (!read.ok())
      ++refused;
    else
      EXPECT_LE(read->sizeInBytes(), bad.size());
  }
  // Most corruptions are refused (a changed padding space is harmless).
  EXPECT_GT(refused, 20);
}

} // namespace
