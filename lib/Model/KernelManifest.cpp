//===- KernelManifest.cpp - what the runtime knows about a kernel ---------===//

#include "kjit/Model/KernelManifest.h"

#include "JsonFields.h"
#include "ValueRules.h"

#include "kjit/Model/Json.h"
#include "kjit/Model/LaunchOptions.h"

#include "absl/container/flat_hash_set.h"
#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"

namespace kjit::rt {

std::string toString(ParamType type) {
  switch (type.kind) {
  case ParamType::Kind::Any:
    return "any";
  case ParamType::Kind::Scalar:
    return std::string(canonicalName(type.dtype));
  case ParamType::Kind::Pointer:
    return kjit::strCat("*", canonicalName(type.dtype));
  }
  return "";
}

std::optional<ParamType> parseParamType(std::string_view text) {
  if (text == "any")
    return ParamType::any();
  bool pointer = !text.empty() && text[0] == '*';
  if (pointer)
    text.remove_prefix(1);
  // parseDType strips a qualifier ("torch.float32"); a type string has none.
  if (text.find('.') != std::string_view::npos)
    return std::nullopt;
  std::optional<DType> dtype = parseDType(text);
  if (!dtype)
    return std::nullopt;
  return pointer ? ParamType::pointer(*dtype) : ParamType::scalar(*dtype);
}

absl::Status verifyManifest(const KernelManifest &manifest) {
  if (manifest.name.empty())
    return absl::InvalidArgumentError(
        "kernel manifest has an empty kernel name");
  auto error = [&](const auto &...parts) {
    return absl::InvalidArgumentError(
        kjit::strCat("kernel '", manifest.name, "': ", parts...));
  };
  absl::flat_hash_set<std::string_view> names;
  const KernelParam *firstDefault = nullptr;
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const KernelParam &p = manifest.params[i];
    if (p.name.empty())
      return error("parameter ", i, " has an empty name");
    if (!names.insert(p.name).second)
      return error("duplicate parameter name '", p.name, "'");
    if (findLaunchOption(p.name))
      return error("parameter '", p.name,
                   "' has the name of a launch option; a keyword argument "
                   "of that name could not be told apart");
    bool pointer = p.type.kind == ParamType::Kind::Pointer;
    if (p.isConstexpr && pointer)
      return error("parameter '", p.name,
                   "' is a pointer and cannot be constexpr");
    if (p.isConstexpr && p.doNotSpecialize)
      return error("parameter '", p.name,
                   "' is constexpr and cannot be do_not_specialize");
    if (p.isConst && p.type.kind == ParamType::Kind::Scalar)
      return error("parameter '", p.name, "' of type ", toString(p.type),
                   " is marked const, which only applies to pointers");
    if (p.type.kind == ParamType::Kind::Scalar && isFloat(p.type.dtype) &&
        bitWidth(p.type.dtype) == 8)
      return error("parameter '", p.name, "' has scalar type ",
                   toString(p.type),
                   "; fp8 values cannot be passed as scalars");
    if (!p.defaultValue) {
      if (firstDefault)
        return error("parameter '", p.name,
                     "' has no default but follows parameter '",
                     firstDefault->name, "', which has one");
      continue;
    }
    if (!firstDefault)
      firstDefault = &p;
    const Argument &value = *p.defaultValue;
    ArgKind kind = value.kind();
    if (kind != ArgKind::None && kind != ArgKind::Bool &&
        kind != ArgKind::Int && kind != ArgKind::Float)
      return error("the default of parameter '", p.name,
                   "' must be an int, a float, a bool or None, got ",
                   describeArgument(value));
    // A default obeys the rules a launch value does.
    detail::ParamRules rules = detail::rulesOf(p);
    Argument normalized = value;
    detail::ValueError valueError;
    if (p.isConstexpr) {
      valueError = detail::normalizeConstexpr(rules, normalized);
    } else {
      SigType type;
      SpecKey spec;
      valueError = detail::specializeValue(rules, normalized, type, spec);
    }
    if (valueError != detail::ValueError::Ok)
      return error("the default of parameter '", p.name,
                   "': ", detail::describeValueError(valueError, rules, value));
  }
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
constexpr int kManifestVersion = 1;
} // namespace

std::string manifestToJson(const KernelManifest &manifest) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  w.key("version").integer(kManifestVersion);
  w.key("name").string(manifest.name);
  w.key("params").beginArray();
  for (const KernelParam &p : manifest.params) {
    w.beginObject();
    w.key("name").string(p.name);
    w.key("type").string(toString(p.type));
    w.key("constexpr").boolean(p.isConstexpr);
    w.key("do_not_specialize").boolean(p.doNotSpecialize);
    w.key("do_not_specialize_on_alignment")
        .boolean(p.doNotSpecializeOnAlignment);
    w.key("const").boolean(p.isConst);
    if (p.defaultValue) {
      w.key("default");
      detail::writeValue(w, *p.defaultValue);
    }
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return out;
}

absl::StatusOr<KernelManifest> manifestFromJson(std::string_view json) {
  absl::StatusOr<JsonValue> doc = parseJson(json);
  if (!doc.ok())
    return detail::FieldReader("kernel manifest").wrap(doc.status());
  return manifestFromJsonValue(*doc);
}

absl::StatusOr<KernelManifest> manifestFromJsonValue(const JsonValue &doc) {
  detail::FieldReader reader("kernel manifest");
  KernelManifest manifest;
  if (absl::Status s =
          reader.object(doc, "", {"version", "name", "params"}, {});
      !s.ok())
    return s;
  if (absl::Status s = reader.version(doc, kManifestVersion); !s.ok())
    return s;
  absl::StatusOr<std::string> name = reader.string(doc, "name");
  if (!name.ok())
    return name.status();
  manifest.name = *name;
  absl::StatusOr<const JsonValue *> params =
      reader.member(doc, "params", JsonValue::Kind::Array);
  if (!params.ok())
    return params.status();
  const std::vector<JsonValue> &elements = (*params)->elements();
  for (size_t i = 0; i < elements.size(); ++i) {
    std::string path = kjit::strCat("params[", i, "]");
    const JsonValue &e = elements[i];
    if (absl::Status s =
            reader.object(e, path,
                          {"name", "type", "constexpr", "do_not_specialize",
                           "do_not_specialize_on_alignment", "const"},
                          {"default"});
        !s.ok())
      return s;
    KernelParam p;
    absl::StatusOr<std::string> pname = reader.string(e, "name", path);
    if (!pname.ok())
      return pname.status();
    p.name = *pname;
    absl::StatusOr<std::string> type = reader.string(e, "type", path);
    if (!type.ok())
      return type.status();
    std::optional<ParamType> parsed = parseParamType(*type);
    if (!parsed)
      return reader.error(detail::FieldReader::join(path, "type"),
                          kjit::strCat("unknown type '", *type, "'"));
    p.type = *parsed;
    struct Flag {
      const char *key;
      bool *field;
    } flags[] = {
        {"constexpr", &p.isConstexpr},
        {"do_not_specialize", &p.doNotSpecialize},
        {"do_not_specialize_on_alignment", &p.doNotSpecializeOnAlignment},
        {"const", &p.isConst}};
    for (const Flag &flag : flags) {
      absl::StatusOr<bool> value = reader.boolean(e, flag.key, path);
      if (!value.ok())
        return value.status();
      *flag.field = *value;
    }
    if (const JsonValue *def = e.find("default")) {
      absl::StatusOr<Argument> value =
          reader.value(*def, kjit::strCat(path, ".default"));
      if (!value.ok())
        return value.status();
      p.defaultValue = *value;
    }
    manifest.params.push_back(std::move(p));
  }
  // verifyManifest's messages name the kernel and parameter already.
  if (absl::Status s = verifyManifest(manifest); !s.ok())
    return s;
  return manifest;
}

} // namespace kjit::rt
