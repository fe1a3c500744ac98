//===- JsonFields.h - typed JSON access with messages -----------*- C++ -*-===//
//
// Internal to the model library. Manifests and records are read through this
// helper so that every malformed document gets a message naming the document
// and the field path ("specialization record: field 'params[2]': expected a
// string, got a number"), and so that both encode values (defaults,
// constants) the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_MODEL_JSONFIELDS_H
#define KJIT_LIB_MODEL_JSONFIELDS_H

#include "kjit/Model/Argument.h"
#include "kjit/Model/Json.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <string>
#include <string_view>

namespace kjit::rt::detail {

/// Writes a None, Bool, Int, Float or DType value: null, true, 17, 1.5,
/// "fp16"; a non-finite float, which JSON cannot spell, as
/// {"float_bits":"0x7ff0000000000000"} (exact, NaN payload included).
void writeValue(JsonWriter &writer, const Argument &value);

/// Reads documents of one kind, prefixing messages with its name.
class FieldReader {
public:
  explicit FieldReader(std::string_view document) : document_(document) {}

  /// "<document>: field '<path>': <message>" ("<document>: <message>" for
  /// the root).
  absl::Status error(std::string_view path, std::string_view message) const;
  /// "<document>: <status message>".
  absl::Status wrap(const absl::Status &status) const;

  /// Checks that `value` (at `path`) is an object with all `required` and
  /// no members besides `required` and `optional`.
  absl::Status object(const JsonValue &value, std::string_view path,
                      absl::Span<const std::string_view> required,
                      absl::Span<const std::string_view> optional) const;
  /// The member `key` of object `value` (at `path`), of kind `kind`.
  absl::StatusOr<const JsonValue *> member(const JsonValue &value,
                                           std::string_view key,
                                           JsonValue::Kind kind,
                                           std::string_view path = "") const;
  absl::StatusOr<std::string> string(const JsonValue &value,
                                     std::string_view key,
                                     std::string_view path = "") const;
  absl::StatusOr<bool> boolean(const JsonValue &value, std::string_view key,
                               std::string_view path = "") const;
  /// Checks the root's "version" member.
  absl::Status version(const JsonValue &root, int expected) const;
  /// Reads a value written by writeValue.
  absl::StatusOr<Argument> value(const JsonValue &value,
                                 std::string_view path) const;

  /// `path`.`key`, or `key` at the root.
  static std::string join(std::string_view path, std::string_view key);

private:
  std::string_view document_;
};

} // namespace kjit::rt::detail

#endif // KJIT_LIB_MODEL_JSONFIELDS_H
