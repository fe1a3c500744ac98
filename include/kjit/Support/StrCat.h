//===- StrCat.h - string concatenation for std::string_view ----*- C++ -*-===//
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

} // namespace kjit

#endif // KJIT_SUPPORT_STRCAT_H
