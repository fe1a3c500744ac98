//===- StrCat.h - string concatenation for std::string_view -----*- C++ -*-===//
//
// For the parts of kjit without LLVM (the runtime core, kjit-run). Debian's
// Abseil is built as C++14, so its absl::string_view is not
// std::string_view and absl::StrCat rejects ours; these helpers concatenate
// the piece types kjit's messages use.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_SUPPORT_STRCAT_H
#define KJIT_SUPPORT_STRCAT_H

#include "absl/strings/str_cat.h"

#include <string>
#include <string_view>
#include <type_traits>

namespace kjit {

inline void appendPiece(std::string &out, std::string_view piece) {
  out += piece;
}
inline void appendPiece(std::string &out, absl::string_view piece) {
  out.append(piece.data(), piece.size());
}
inline void appendPiece(std::string &out, const std::string &piece) {
  out += piece;
}
inline void appendPiece(std::string &out, const char *piece) { out += piece; }
inline void appendPiece(std::string &out, char piece) { out += piece; }
inline void appendPiece(std::string &out, double piece) {
  absl::StrAppend(&out, piece);
}
inline void appendPiece(std::string &out, const absl::Hex &piece) {
  absl::StrAppend(&out, piece);
}
/// Integers up to 64 bits (128-bit ones go through int128ToString).
template <typename T,
          std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> &&
                               !std::is_same_v<T, bool> && sizeof(T) <= 8,
                           int> = 0>
void appendPiece(std::string &out, T piece) {
  out += std::to_string(piece);
}

/// Appends every piece to `*out`.
template <typename... Pieces>
void strAppend(std::string *out, const Pieces &...pieces) {
  (appendPiece(*out, pieces), ...);
}

/// Concatenates the pieces.
template <typename... Pieces> std::string strCat(const Pieces &...pieces) {
  std::string out;
  strAppend(&out, pieces...);
  return out;
}

/// `bytes` safe to print in a message: every control byte (below 0x20,
/// and 0x7f) becomes `\xNN`, so that bytes from a file (an .npy header, a
/// record) can neither cut a message short (NUL) nor drive the terminal
/// (ESC sequences). With `keepNewlines`, '\n' and '\t' stay as they are
/// (multi-line compiler diagnostics). Bytes from 0x80 up pass unchanged:
/// they are UTF-8 in names and paths.
inline std::string escapeControl(std::string_view bytes,
                                 bool keepNewlines = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (char c : bytes) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u >= 0x20 && u != 0x7f) ||
        (keepNewlines && (c == '\n' || c == '\t'))) {
      out += c;
      continue;
    }
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 15];
  }
  return out;
}

} // namespace kjit

#endif // KJIT_SUPPORT_STRCAT_H
