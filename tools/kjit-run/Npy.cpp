//===- Npy.cpp - numpy .npy files for kjit-run ----------------------------===//

#include "Npy.h"
#include "WriteFile.h"

#include "kjit/Support/StrCat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

// The data is copied byte for byte between files and buffers: both must be
// little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "kjit-run's .npy support assumes a little-endian host");

namespace kjit::run {

using rt::DType;

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

/// numpy's type string ("<f4"): the byte order ('|' for one byte, which
/// has none; '<' otherwise, see the static_assert above), the kind letter
/// and the size in bytes. bf16 has no numpy dtype and is written as its raw
/// bits, '<u2' like u16; the fp8 formats have none (an empty string).
using Descr = std::array<char, 4>;

constexpr Descr descrOf(DType dtype) {
  if (rt::isFloat(dtype) && rt::bitWidth(dtype) == 8)
    return {};
  char kind = rt::isBool(dtype)      ? 'b'
              : dtype == DType::BF16 ? 'u'
              : rt::isFloat(dtype)   ? 'f'
              : rt::isSigned(dtype)  ? 'i'
                                     : 'u';
  unsigned bytes = rt::byteWidth(dtype);
  return {bytes == 1 ? '|' : '<', kind, static_cast<char>('0' + bytes), '\0'};
}

constexpr std::array<Descr, rt::kNumDTypes> kDescrs = [] {
  std::array<Descr, rt::kNumDTypes> descrs{};
  for (int i = 0; i < rt::kNumDTypes; ++i)
    descrs[i] = descrOf(static_cast<DType>(i));
  return descrs;
}();

/// A cursor over the header's Python dict literal.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool consumeWord(std::string_view word) {
    skipSpace();
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }
  bool atEnd() {
    skipSpace();
    return pos_ == text_.size();
  }
  /// A Python string literal in single or double quotes, without escapes.
  std::optional<std::string> string() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return std::nullopt;
    char quote = text_[pos_];
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos)
      return std::nullopt;
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos)
      return std::nullopt;
    pos_ = end + 1;
    return value;
  }
  /// A non-negative decimal integer that fits in int64_t.
  std::optional<int64_t> integer() {
    skipSpace();
    size_t begin = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value))
        return std::nullopt;
      ++pos_;
    }
    if (pos_ == begin)
      return std::nullopt;
    return value;
  }
  /// After integer() failed: whether it stopped inside a number (one too
  /// large for 64 bits) rather than at something else.
  bool atDigit() const {
    return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
  }

private:
  std::string_view text_;
  size_t pos_ = 0;
};

absl::Status headerError(std::string_view what) {
  return absl::InvalidArgumentError(kjit::strCat("malformed header: ", what));
}

/// Parses the dict literal of a header.
absl::Status parseHeaderDict(std::string_view text, std::string &descr,
                             bool &fortranOrder, Shape &shape) {
  HeaderParser parser(text);
  bool haveDescr = false, haveOrder = false, haveShape = false;
  if (!parser.consume('{'))
    return headerError("expected a dict literal '{...}'");
  while (!parser.consume('}')) {
    std::optional<std::string> key = parser.string();
    if (!key)
      return headerError("expected a quoted key");
    if (!parser.consume(':'))
      return headerError(kjit::strCat("expected ':' after '", *key, "'"));
    if (*key == "descr") {
      std::optional<std::string> value = parser.string();
      if (!value)
        return headerError(
            "'descr' is not a type string (structured dtypes are not "
            "supported)");
      descr = *value;
      haveDescr = !haveDescr;
      if (!haveDescr)
        return headerError("'descr' appears twice");
    } else if (*key == "fortran_order") {
      if (parser.consumeWord("True"))
        fortranOrder = true;
      else if (parser.consumeWord("False"))
        fortranOrder = false;
      else
        return headerError("'fortran_order' is neither True nor False");
      haveOrder = !haveOrder;
      if (!haveOrder)
        return headerError("'fortran_order' appears twice");
    } else if (*key == "shape") {
      if (!parser.consume('('))
        return headerError("'shape' is not a tuple");
      shape.clear();
      while (!parser.consume(')')) {
        std::optional<int64_t> extent = parser.integer();
        if (!extent)
          return headerError(parser.atDigit()
                                 ? "'shape' holds an extent past 2^63-1"
                                 : "'shape' holds something other than a "
                                   "non-negative integer");
        shape.push_back(*extent);
        if (!parser.consume(',')) {
          if (!parser.consume(')'))
            return headerError("'shape' tuple is not closed");
          break;
        }
      }
      haveShape = !haveShape;
      if (!haveShape)
        return headerError("'shape' appears twice");
    } else {
      return headerError(kjit::strCat("unexpected key '", *key, "'"));
    }
    if (!parser.consume(',')) {
      if (!parser.consume('}'))
        return headerError("expected ',' or '}' after a value");
      break;
    }
  }
  if (!parser.atEnd())
    return headerError("text after the dict literal");
  if (!haveDescr)
    return headerError("no 'descr' key");
  if (!haveOrder)
    return headerError("no 'fortran_order' key");
  if (!haveShape)
    return headerError("no 'shape' key");
  return absl::OkStatus();
}

uint32_t readLittleEndian(std::string_view bytes, size_t offset, size_t size) {
  uint32_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |=
        static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i]))
        << (8 * i);
  return value;
}

/// Size of the preamble (magic, version, header length) and of the header,
/// checked against the file size.
struct Preamble {
  size_t preambleSize;
  uint64_t headerSize;
};

absl::StatusOr<Preamble> parsePreamble(std::string_view bytes,
                                       uint64_t fileSize) {
  if (bytes.size() < 10 || bytes.substr(0, kMagic.size()) != kMagic)
    return absl::InvalidArgumentError(
        "not a .npy file (it does not start with \"\\x93NUMPY\")");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  Preamble preamble;
  if (major == 1 && minor == 0) {
    preamble.preambleSize = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    preamble.preambleSize = 12;
    if (bytes.size() < 12)
      return absl::InvalidArgumentError(
          "truncated: the file ends inside the preamble");
  } else {
    return absl::InvalidArgumentError(
        kjit::strCat("unsupported format version ", major, ".", minor,
                     " (kjit-run reads 1.0, 2.0 and 3.0)"));
  }
  preamble.headerSize = readLittleEndian(bytes, 8, preamble.preambleSize - 8);
  if (preamble.preambleSize + preamble.headerSize > fileSize)
    return absl::InvalidArgumentError(kjit::strCat(
        "truncated: the header length (", preamble.headerSize,
        " bytes) runs past the end of the file (", fileSize, " bytes)"));
  return preamble;
}

std::string errnoText() { return std::strerror(errno); }

/// Reads exactly `size` bytes at the current offset.
bool readAll(int fd, char *into, size_t size) {
  while (size > 0) {
    ssize_t got = ::read(fd, into, size);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    into += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

/// Closes a file descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

std::string_view npyDescr(DType dtype) {
  return kDescrs[static_cast<int>(dtype)].data();
}

absl::StatusOr<DType> dtypeOfNpyDescr(std::string_view descr,
                                      std::optional<DType> expected) {
  if (descr.size() >= 2 && descr[0] == '>' &&
      !(descr.size() == 3 && descr[2] == '1'))
    return absl::InvalidArgumentError(
        kjit::strCat("big-endian data ('", descr,
                     "') is not supported; convert it with "
                     "a.astype(a.dtype.newbyteorder('<'))"));
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' ||
                            descr[0] == '|' || descr[0] == '>')) {
    std::string_view code = descr.substr(1);
    // '|' (not applicable) is how numpy marks one-byte types, and a byte
    // has no order, so any mark is fine for those; wider ones need '<' or
    // '=' (native, which static_assert above makes little-endian).
    bool oneByte = code[1] == '1';
    if (oneByte || descr[0] != '|') {
      if (code == "u2" && expected == DType::BF16)
        return DType::BF16;
      for (int i = 0; i < rt::kNumDTypes; ++i) {
        auto dtype = static_cast<DType>(i);
        std::string_view known = npyDescr(dtype);
        if (!known.empty() && known.substr(1) == code && dtype != DType::BF16)
          return dtype;
      }
    }
  }
  return absl::InvalidArgumentError(kjit::strCat(
      "unsupported dtype '", descr,
      "' (kjit-run reads bool, int8-64, uint8-64, float16, float32 and "
      "float64)"));
}

absl::StatusOr<NpyHeader> parseNpyHeader(std::string_view bytes,
                                         uint64_t fileSize,
                                         std::optional<DType> expected) {
  absl::StatusOr<Preamble> preamble = parsePreamble(bytes, fileSize);
  if (!preamble.ok())
    return preamble.status();
  uint64_t headerEnd = preamble->preambleSize + preamble->headerSize;
  if (bytes.size() < headerEnd)
    return absl::InvalidArgumentError(
        "truncated: the file ends inside the header");
  std::string_view text =
      bytes.substr(preamble->preambleSize, preamble->headerSize);

  NpyHeader header;
  bool fortranOrder = false;
  if (absl::Status status =
          parseHeaderDict(text, header.descr, fortranOrder, header.shape);
      !status.ok())
    return status;
  absl::StatusOr<DType> dtype = dtypeOfNpyDescr(header.descr, expected);
  if (!dtype.ok())
    return dtype.status();
  header.dtype = *dtype;
  // A Fortran-order array of one dimension (or of size-1 others) has the
  // same layout as C order, but numpy writes True only for genuinely
  // column-major data; refusing it always keeps the rule simple.
  if (fortranOrder)
    return absl::InvalidArgumentError(
        "fortran_order is True; kjit-run reads C-order arrays only (save "
        "np.ascontiguousarray(a))");
  header.dataOffset = headerEnd;

  std::optional<int64_t> count = numElementsOf(header.shape);
  uint64_t dataBytes = 0;
  if (!count ||
      __builtin_mul_overflow(static_cast<uint64_t>(*count),
                             static_cast<uint64_t>(rt::byteWidth(header.dtype)),
                             &dataBytes))
    return absl::InvalidArgumentError(
        kjit::strCat("shape ", formatShape(header.shape), " is too large"));
  uint64_t available = fileSize - headerEnd;
  if (available != dataBytes)
    return absl::InvalidArgumentError(kjit::strCat(
        available < dataBytes ? "truncated: " : "corrupt: ", "shape ",
        formatShape(header.shape), " of '", header.descr, "' needs ", dataBytes,
        " data bytes, but the file holds ", available));
  return header;
}

absl::StatusOr<HostBuffer> readNpy(const std::string &path,
                                   std::optional<DType> expected) {
  // The messages quote header bytes (keys, dtypes): escaped, so that a
  // NUL or an escape sequence in a file cannot reach the terminal.
  auto fail = [&](const absl::Status &status) {
    return absl::Status(
        status.code(),
        kjit::strCat("npy file '", kjit::escapeControl(path), "': ",
                     kjit::escapeControl(std::string_view(
                         status.message().data(), status.message().size()))));
  };
  auto failText = [&](std::string_view text) {
    return fail(absl::InvalidArgumentError(std::string(text)));
  };

  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(
        absl::NotFoundError(kjit::strCat("cannot open: ", errnoText())));
  FdCloser closer{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return failText(kjit::strCat("cannot stat: ", errnoText()));
  if (!S_ISREG(info.st_mode))
    return failText("not a regular file");
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);

  // The preamble first: it gives the header size, checked against the file
  // size before the header is read.
  std::string bytes(std::min<uint64_t>(fileSize, 12), '\0');
  if (!readAll(fd, bytes.data(), bytes.size()))
    return failText(kjit::strCat("cannot read: ", errnoText()));
  absl::StatusOr<Preamble> preamble = parsePreamble(bytes, fileSize);
  if (!preamble.ok())
    return fail(preamble.status());
  size_t headerEnd = preamble->preambleSize + preamble->headerSize;
  size_t have = bytes.size();
  bytes.resize(std::max(have, headerEnd));
  if (headerEnd > have && !readAll(fd, bytes.data() + have, headerEnd - have))
    return failText(kjit::strCat("cannot read: ", errnoText()));
  bytes.resize(headerEnd);

  absl::StatusOr<NpyHeader> header = parseNpyHeader(bytes, fileSize, expected);
  if (!header.ok())
    return fail(header.status());
  // The data size now equals what the file holds, so this allocation is
  // bounded by the file's size.
  absl::StatusOr<HostBuffer> buffer =
      HostBuffer::allocate(header->dtype, header->shape);
  if (!buffer.ok())
    return fail(buffer.status());
  // readAll leaves errno alone at end of file: a file that shrank since
  // fstat reads as "file shrank", not as a stale error.
  errno = 0;
  if (::lseek(fd, static_cast<off_t>(header->dataOffset), SEEK_SET) < 0 ||
      !readAll(fd, static_cast<char *>(buffer->data()), buffer->sizeInBytes()))
    return failText(kjit::strCat("cannot read the data: ",
                                 errno ? errnoText() : "file shrank"));
  if (header->dtype == DType::I1) {
    // numpy bools are 0 or 1; anything else means the file is not what its
    // header says, and kernels assume the two values.
    const auto *data = static_cast<const unsigned char *>(buffer->data());
    for (size_t i = 0; i < buffer->sizeInBytes(); ++i)
      if (data[i] > 1)
        return failText(kjit::strCat("corrupt: bool element ", i, " is ",
                                     static_cast<unsigned>(data[i]),
                                     ", not 0 or 1"));
  }
  return buffer;
}

absl::StatusOr<std::string> encodeNpy(const HostBuffer &buffer) {
  std::string_view descr = npyDescr(buffer.dtype());
  if (descr.empty())
    return absl::InvalidArgumentError(
        kjit::strCat(rt::canonicalName(buffer.dtype()),
                     " has no numpy dtype; it cannot be saved as .npy"));
  std::string dict = kjit::strCat("{'descr': '", descr,
                                  "', 'fortran_order': False, 'shape': (");
  const Shape &shape = buffer.shape();
  for (size_t i = 0; i < shape.size(); ++i)
    kjit::strAppend(&dict, i ? ", " : "", shape[i]);
  kjit::strAppend(&dict, shape.size() == 1 ? ",), }" : "), }");

  // numpy pads with spaces and a final newline so that the data starts at a
  // multiple of 64 bytes; version 2.0 only when 1.0's 16-bit length is short.
  size_t preambleSize = 10;
  auto padded = [&](size_t preamble) {
    return (preamble + dict.size() + 1 + 63) / 64 * 64 - preamble;
  };
  size_t headerSize = padded(preambleSize);
  if (headerSize > 0xffff) {
    preambleSize = 12;
    headerSize = padded(preambleSize);
  }
  std::string out(kMagic);
  out += static_cast<char>(preambleSize == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < preambleSize - 8; ++i)
    out += static_cast<char>((headerSize >> (8 * i)) & 0xff);
  out += dict;
  out.append(headerSize - dict.size() - 1, ' ');
  out += '\n';
  out.append(static_cast<const char *>(buffer.data()), buffer.sizeInBytes());
  return out;
}

absl::Status writeNpy(const std::string &path, const HostBuffer &buffer) {
  auto fail = [&](std::string_view text) {
    return absl::InvalidArgumentError(
        kjit::strCat("npy file '", path, "': ", text));
  };
  absl::StatusOr<std::string> encoded = encodeNpy(buffer);
  if (!encoded.ok())
    return fail(std::string(encoded.status().message()));
  if (absl::Status written = writeFile(path, *encoded); !written.ok())
    return fail(std::string(written.message()));
  return absl::OkStatus();
}

} // namespace kjit::run
