//===- Specialization.cpp - the specialization record ---------------------===//

#include "kjit/Model/Specialization.h"

#include "JsonFields.h"
#include "ValueRules.h"

#include "kjit-c/Plugin.h"
#include "kjit/Model/Json.h"

#include "absl/container/flat_hash_map.h"
#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kjit::rt {

std::string_view toString(SpecKey key) {
  switch (key) {
  case SpecKey::None:
    return "";
  case SpecKey::Divisible16:
    return "D";
  case SpecKey::EqualTo1:
    return "1";
  case SpecKey::Plain:
    return "N";
  }
  return "";
}

std::string toString(SigType type) {
  switch (type.kind) {
  case SigType::Kind::Scalar:
    return std::string(canonicalName(type.dtype));
  case SigType::Kind::Pointer:
    return kjit::strCat("*", canonicalName(type.dtype));
  case SigType::Kind::ConstPointer:
    return kjit::strCat("*k", canonicalName(type.dtype));
  case SigType::Kind::NullPointer:
    return "*i8";
  }
  return "";
}

std::optional<SigType> parseSigType(std::string_view text) {
  SigType type;
  type.kind = SigType::Kind::Scalar;
  if (text.substr(0, 2) == "*k") {
    type.kind = SigType::Kind::ConstPointer;
    text.remove_prefix(2);
  } else if (text.substr(0, 1) == "*") {
    type.kind = SigType::Kind::Pointer;
    text.remove_prefix(1);
  }
  std::optional<DType> dtype = parseDType(text);
  // Only canonical names: a record is written by kjit, in canonical form.
  if (!dtype || canonicalName(*dtype) != text)
    return std::nullopt;
  type.dtype = *dtype;
  return type;
}

std::optional<Argument> SpecializedParam::constant() const {
  if (isConstexpr)
    return value;
  if (type.kind == SigType::Kind::NullPointer)
    return Argument::none();
  if (specKey == SpecKey::EqualTo1)
    return Argument::integer(1);
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>>
SpecializationRecord::signature() const {
  std::vector<std::pair<std::string, std::string>> result;
  for (const SpecializedParam &p : params)
    if (!p.isConstexpr)
      result.emplace_back(p.name, toString(p.type));
  return result;
}

std::vector<std::pair<std::string, Argument>>
SpecializationRecord::constants() const {
  std::vector<std::pair<std::string, Argument>> result;
  for (const SpecializedParam &p : params)
    if (std::optional<Argument> c = p.constant())
      result.emplace_back(p.name, *c);
  return result;
}

std::vector<std::string> SpecializationRecord::divisibleBy16() const {
  std::vector<std::string> result;
  for (const SpecializedParam &p : params)
    if (p.specKey == SpecKey::Divisible16)
      result.push_back(p.name);
  return result;
}

std::vector<std::string> SpecializationRecord::equalTo1() const {
  std::vector<std::string> result;
  for (const SpecializedParam &p : params)
    if (p.specKey == SpecKey::EqualTo1)
      result.push_back(p.name);
  return result;
}

bool isBackendAttributeName(std::string_view name) {
  if (name.empty() || name.size() > 64)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::vector<std::string>
SpecializationRecord::withBackendAttribute(size_t bit) const {
  std::vector<std::string> result;
  for (const SpecializedParam &p : params)
    if (!p.isConstexpr && (p.backendAttrs & (1u << bit)))
      result.push_back(p.name);
  return result;
}

const SpecializedParam *
SpecializationRecord::find(std::string_view name) const {
  for (const SpecializedParam &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string formatConstant(const Argument &value) {
  switch (value.kind()) {
  case ArgKind::None:
    return "none";
  case ArgKind::Bool:
    return value.asBool() ? "true" : "false";
  case ArgKind::Int:
    return int128ToString(value.asInt());
  case ArgKind::Float: {
    double f = value.asFloat();
    if (std::isnan(f))
      return "nan";
    if (std::isinf(f))
      return f > 0 ? "inf" : "-inf";
    std::string out;
    JsonWriter(out).finiteDouble(f);
    return out;
  }
  case ArgKind::DType:
    return std::string(canonicalName(value.dtype()));
  default:
    return "?";
  }
}

std::string canonicalKey(const SpecializationRecord &record) {
  std::string key;
  bool first = true;
  for (const SpecializedParam &p : record.params) {
    kjit::strAppend(&key, first ? "" : ",", p.name);
    first = false;
    if (p.isConstexpr) {
      kjit::strAppend(&key, "=", formatConstant(p.value));
      continue;
    }
    kjit::strAppend(&key, ":", toString(p.type));
    if (p.specKey != SpecKey::None)
      kjit::strAppend(&key, ":", toString(p.specKey));
    for (size_t bit = 0; bit < record.backendAttributes.size(); ++bit)
      if (p.backendAttrs & (1u << bit))
        kjit::strAppend(&key, "+", record.backendAttributes[bit]);
    if (p.type.kind == SigType::Kind::NullPointer)
      kjit::strAppend(&key, "=none");
  }
  key += '|';
  // Sorted by name: the key is the same whatever order options were given
  // in and wherever the table puts them.
  std::vector<const LaunchOptionInfo *> options;
  for (const LaunchOptionInfo &info : launchOptionTable())
    options.push_back(&info);
  std::sort(options.begin(), options.end(),
            [](const LaunchOptionInfo *a, const LaunchOptionInfo *b) {
              return a->name < b->name;
            });
  first = true;
  for (const LaunchOptionInfo *info : options) {
    kjit::strAppend(
        &key, first ? "" : ",", info->name, "=",
        formatLaunchOption(info->option, record.options.raw(info->option)));
    first = false;
  }
  return key;
}

std::string repr(const SpecializationRecord &record) {
  const LaunchOptions &o = record.options;
  std::string out = kjit::strCat(
      record.name, "[num_warps=", o.numWarps(), ", num_ctas=", o.numCtas(),
      ", num_stages=", o.numStages(),
      ", enable_fp_fusion=", o.enableFpFusion() ? "true" : "false", "](");
  bool first = true;
  for (const SpecializedParam &p : record.params) {
    kjit::strAppend(&out, first ? "" : ", ", p.name, ": ");
    first = false;
    if (p.isConstexpr)
      kjit::strAppend(&out, "constexpr = ", formatConstant(p.value));
    else
      kjit::strAppend(&out, toString(p.type));
  }
  out += ')';
  return out;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {

constexpr int kRecordVersion = 1;

constexpr std::string_view kRootMembers[] = {
    "version",   "name",  "params",  "signature", "spec",
    "constants", "attrs", "options", "key"};
/// Where the record was made (SpecializationRecord::target, sourceHash).
constexpr std::string_view kOptionalRootMembers[] = {"target", "source_hash"};

void writeNames(JsonWriter &w, const std::vector<std::string> &names) {
  w.beginArray();
  for (const std::string &name : names)
    w.string(name);
  w.endArray();
}

} // namespace

std::string toJson(const SpecializationRecord &record) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  w.key("version").integer(kRecordVersion);
  w.key("name").string(record.name);
  w.key("params").beginArray();
  for (const SpecializedParam &p : record.params)
    w.string(p.name);
  w.endArray();
  w.key("signature").beginObject();
  for (const auto &[name, type] : record.signature())
    w.key(name).string(type);
  w.endObject();
  w.key("spec").beginObject();
  for (const SpecializedParam &p : record.params)
    if (!p.isConstexpr && p.specKey != SpecKey::None)
      w.key(p.name).string(toString(p.specKey));
  w.endObject();
  w.key("constants").beginObject();
  for (const auto &[name, value] : record.constants()) {
    w.key(name);
    detail::writeValue(w, value);
  }
  w.endObject();
  w.key("attrs").beginObject();
  w.key("divisibility_16");
  writeNames(w, record.divisibleBy16());
  w.key("equal_to_1");
  writeNames(w, record.equalTo1());
  for (size_t bit = 0; bit < record.backendAttributes.size(); ++bit) {
    w.key(record.backendAttributes[bit]);
    writeNames(w, record.withBackendAttribute(bit));
  }
  w.endObject();
  w.key("options").beginObject();
  for (const LaunchOptionInfo &info : launchOptionTable()) {
    w.key(info.name);
    int64_t value = record.options.raw(info.option);
    if (info.kind == LaunchOptionKind::Bool)
      w.boolean(value != 0);
    else if (value == LaunchOptions::kUnset)
      w.null();
    else
      w.integer(value);
  }
  w.endObject();
  w.key("key").string(record.key);
  if (!record.target.empty())
    w.key("target")
        .beginObject()
        .key("backend")
        .string(record.target)
        .key("arch")
        .string(record.arch)
        .endObject();
  if (!record.sourceHash.empty())
    w.key("source_hash").string(record.sourceHash);
  w.endObject();
  return out;
}

namespace {

/// Reads a record; one method per field so that each failure returns early
/// with a message naming its field.
class RecordReader {
public:
  absl::StatusOr<SpecializationRecord> read(std::string_view json) {
    absl::StatusOr<JsonValue> doc = parseJson(json);
    if (!doc.ok())
      return r_.wrap(doc.status());
    const JsonValue &root = *doc;
    absl::Status s = r_.object(root, "", kRootMembers, kOptionalRootMembers);
    if (s.ok())
      s = r_.version(root, kRecordVersion);
    if (s.ok())
      s = readName(root);
    if (s.ok())
      s = readParams(root);
    if (s.ok())
      s = readSignature(root);
    if (s.ok())
      s = readSpec(root);
    if (s.ok())
      s = readConstants(root);
    if (s.ok())
      s = checkAttrs(root);
    if (s.ok())
      s = readOptions(root);
    if (s.ok())
      s = readKey(root);
    if (s.ok())
      s = readOrigin(root);
    if (!s.ok())
      return s;
    return std::move(record_);
  }

private:
  absl::Status readName(const JsonValue &root) {
    absl::StatusOr<std::string> name = r_.string(root, "name");
    if (!name.ok())
      return name.status();
    if (name->empty())
      return r_.error("name", "the kernel name is empty");
    record_.name = *name;
    return absl::OkStatus();
  }

  absl::Status readParams(const JsonValue &root) {
    absl::StatusOr<const JsonValue *> params =
        r_.member(root, "params", JsonValue::Kind::Array);
    if (!params.ok())
      return params.status();
    const std::vector<JsonValue> &names = (*params)->elements();
    for (size_t i = 0; i < names.size(); ++i) {
      std::string path = kjit::strCat("params[", i, "]");
      if (!names[i].isString())
        return r_.error(path, kjit::strCat("expected a string, got ",
                                           jsonKindName(names[i].kind())));
      const std::string &name = names[i].text();
      if (name.empty())
        return r_.error(path, "empty parameter name");
      if (!index_.emplace(name, i).second)
        return r_.error(path,
                        kjit::strCat("duplicate parameter ", quoteJson(name)));
      SpecializedParam p;
      p.name = name;
      // Constexpr until the signature names it.
      p.isConstexpr = true;
      record_.params.push_back(std::move(p));
    }
    return absl::OkStatus();
  }

  /// The parameter that member `key` of field `field` names.
  absl::StatusOr<SpecializedParam *> param(std::string_view field,
                                           const std::string &key) {
    auto it = index_.find(key);
    if (it == index_.end())
      return r_.error(field,
                      kjit::strCat("unknown parameter ", quoteJson(key)));
    return &record_.params[it->second];
  }

  absl::Status readSignature(const JsonValue &root) {
    absl::StatusOr<const JsonValue *> sig =
        r_.member(root, "signature", JsonValue::Kind::Object);
    if (!sig.ok())
      return sig.status();
    for (const JsonMember &m : (*sig)->members()) {
      absl::StatusOr<SpecializedParam *> p = param("signature", m.key);
      if (!p.ok())
        return p.status();
      std::string path = r_.join("signature", m.key);
      if (!m.value.isString())
        return r_.error(path, kjit::strCat("expected a string, got ",
                                           jsonKindName(m.value.kind())));
      std::optional<SigType> type = parseSigType(m.value.text());
      if (!type)
        return r_.error(
            path, kjit::strCat("unknown type ", quoteJson(m.value.text())));
      (*p)->isConstexpr = false;
      (*p)->type = *type;
    }
    return absl::OkStatus();
  }

  absl::Status readSpec(const JsonValue &root) {
    absl::StatusOr<const JsonValue *> spec =
        r_.member(root, "spec", JsonValue::Kind::Object);
    if (!spec.ok())
      return spec.status();
    for (const JsonMember &m : (*spec)->members()) {
      absl::StatusOr<SpecializedParam *> p = param("spec", m.key);
      if (!p.ok())
        return p.status();
      std::string path = r_.join("spec", m.key);
      if ((*p)->isConstexpr)
        return r_.error(path, "a constexpr parameter has no spec key");
      // Both arms are views: a std::string arm would make the result a
      // temporary that the view outlives.
      std::string_view text = m.value.isString()
                                  ? std::string_view(m.value.text())
                                  : std::string_view();
      SpecKey key;
      if (text == "D")
        key = SpecKey::Divisible16;
      else if (text == "1")
        key = SpecKey::EqualTo1;
      else if (text == "N")
        key = SpecKey::Plain;
      else
        return r_.error(path, "expected \"D\", \"1\" or \"N\"");
      SigType type = (*p)->type;
      bool integer =
          type.kind == SigType::Kind::Scalar && isInteger(type.dtype);
      bool possible = key == SpecKey::Plain || integer ||
                      (key == SpecKey::Divisible16 && type.isPointer());
      if (!possible)
        return r_.error(path, kjit::strCat("spec key ", text,
                                           " is impossible for type ",
                                           toString(type)));
      (*p)->specKey = key;
    }
    return absl::OkStatus();
  }

  absl::Status readConstants(const JsonValue &root) {
    absl::StatusOr<const JsonValue *> constants =
        r_.member(root, "constants", JsonValue::Kind::Object);
    if (!constants.ok())
      return constants.status();
    for (const JsonMember &m : (*constants)->members()) {
      absl::StatusOr<SpecializedParam *> p = param("constants", m.key);
      if (!p.ok())
        return p.status();
      std::string path = r_.join("constants", m.key);
      absl::StatusOr<Argument> value = r_.value(m.value, path);
      if (!value.ok())
        return value.status();
      SpecializedParam &sp = **p;
      if (sp.isConstexpr) {
        sp.value = *value;
        continue;
      }
      // A runtime parameter's constant is derived: null for a None pointer,
      // 1 for the 1 spec key.
      if (value->isNone() &&
          sp.type == SigType{SigType::Kind::Pointer, DType::I8}) {
        if (sp.specKey == SpecKey::Divisible16)
          return r_.error(path, "a None pointer cannot have spec key D");
        sp.type.kind = SigType::Kind::NullPointer;
        continue;
      }
      if (*value == Argument::integer(1) && sp.specKey == SpecKey::EqualTo1)
        continue;
      return r_.error(path, "the constant of a non-constexpr parameter must "
                            "be null (a None *i8) or 1 (spec key 1)");
    }
    for (const SpecializedParam &p : record_.params) {
      bool listed = (*constants)->find(p.name) != nullptr;
      if (p.isConstexpr && !listed)
        return r_.error("constants",
                        kjit::strCat("missing the value of constexpr "
                                     "parameter ",
                                     quoteJson(p.name),
                                     " (every parameter is in the signature "
                                     "or the constants)"));
      if (!p.isConstexpr && p.specKey == SpecKey::EqualTo1 && !listed)
        return r_.error("constants",
                        kjit::strCat("parameter ", quoteJson(p.name),
                                     " has spec key 1 but no constant 1"));
    }
    return absl::OkStatus();
  }

  absl::Status checkNames(const JsonValue &attrs, std::string_view key,
                          const std::vector<std::string> &expected) {
    std::string path = r_.join("attrs", key);
    absl::StatusOr<const JsonValue *> list =
        r_.member(attrs, key, JsonValue::Kind::Array, "attrs");
    if (!list.ok())
      return list.status();
    std::vector<std::string> names;
    for (const JsonValue &e : (*list)->elements()) {
      if (!e.isString())
        return r_.error(path, kjit::strCat("expected strings, got ",
                                           jsonKindName(e.kind())));
      names.push_back(e.text());
    }
    if (names != expected) {
      std::string want;
      JsonWriter w(want);
      writeNames(w, expected);
      return r_.error(path, kjit::strCat("does not match the spec keys "
                                         "(expected ",
                                         want, ")"));
    }
    return absl::OkStatus();
  }

  absl::Status checkAttrs(const JsonValue &root) {
    absl::StatusOr<const JsonValue *> attrs =
        r_.member(root, "attrs", JsonValue::Kind::Object);
    if (!attrs.ok())
      return attrs.status();
    // The runtime's two attributes, then the backend's own (plugin ABI
    // 1.3), each listing the parameters it holds for.
    std::vector<std::string_view> required = {"divisibility_16", "equal_to_1"};
    for (const JsonMember &m : (*attrs)->members()) {
      if (m.key == "divisibility_16" || m.key == "equal_to_1")
        continue;
      if (absl::Status s = readBackendAttribute(m); !s.ok())
        return s;
      required.push_back(m.key);
    }
    if (absl::Status s = r_.object(**attrs, "attrs", required, {}); !s.ok())
      return s;
    if (absl::Status s =
            checkNames(**attrs, "divisibility_16", record_.divisibleBy16());
        !s.ok())
      return s;
    return checkNames(**attrs, "equal_to_1", record_.equalTo1());
  }

  /// One backend attribute of "attrs": its name and the non-constexpr
  /// parameters it holds for.
  absl::Status readBackendAttribute(const JsonMember &m) {
    std::string path = r_.join("attrs", m.key);
    if (!isBackendAttributeName(m.key))
      return r_.error(path, "a backend attribute's name is [a-z0-9_]+ of at "
                            "most 64 bytes");
    if (record_.backendAttributes.size() >= KJIT_MAX_SPEC_ATTRIBUTES)
      return r_.error(path, kjit::strCat("more than ", KJIT_MAX_SPEC_ATTRIBUTES,
                                         " backend attributes"));
    if (!m.value.isArray())
      return r_.error(path, kjit::strCat("expected an array, got ",
                                         jsonKindName(m.value.kind())));
    uint32_t bit = 1u << record_.backendAttributes.size();
    for (const JsonValue &e : m.value.elements()) {
      if (!e.isString())
        return r_.error(path, kjit::strCat("expected strings, got ",
                                           jsonKindName(e.kind())));
      absl::StatusOr<SpecializedParam *> p = param(path, e.text());
      if (!p.ok())
        return p.status();
      if ((*p)->isConstexpr)
        return r_.error(path, kjit::strCat("names constexpr parameter ",
                                           quoteJson(e.text())));
      if ((*p)->backendAttrs & bit)
        return r_.error(path, kjit::strCat("names parameter ",
                                           quoteJson(e.text()), " twice"));
      (*p)->backendAttrs |= bit;
    }
    record_.backendAttributes.push_back(m.key);
    return absl::OkStatus();
  }

  absl::Status readOptions(const JsonValue &root) {
    absl::StatusOr<const JsonValue *> options =
        r_.member(root, "options", JsonValue::Kind::Object);
    if (!options.ok())
      return options.status();
    std::vector<std::string_view> names;
    for (const LaunchOptionInfo &info : launchOptionTable())
      names.push_back(info.name);
    if (absl::Status s = r_.object(**options, "options", names, {}); !s.ok())
      return s;
    for (const LaunchOptionInfo &info : launchOptionTable()) {
      std::string path = r_.join("options", info.name);
      absl::StatusOr<Argument> value =
          r_.value(*(*options)->find(info.name), path);
      if (!value.ok())
        return value.status();
      int64_t stored;
      if (absl::Status s = checkLaunchOption(info.option, *value, &stored);
          !s.ok())
        return r_.error(path, std::string(s.message()));
      record_.options.setRaw(info.option, stored);
    }
    return absl::OkStatus();
  }

  absl::Status readKey(const JsonValue &root) {
    absl::StatusOr<std::string> key = r_.string(root, "key");
    if (!key.ok())
      return key.status();
    std::string expected = canonicalKey(record_);
    if (*key != expected)
      return r_.error("key", kjit::strCat("does not match the record's "
                                          "contents (expected ",
                                          quoteJson(expected), ")"));
    record_.key = *key;
    return absl::OkStatus();
  }

  /// The optional "target" {"backend", "arch"} and "source_hash".
  absl::Status readOrigin(const JsonValue &root) {
    if (root.find("target")) {
      static constexpr std::string_view kTarget[] = {"backend", "arch"};
      absl::StatusOr<const JsonValue *> target =
          r_.member(root, "target", JsonValue::Kind::Object);
      if (!target.ok())
        return target.status();
      if (absl::Status s = r_.object(**target, "target", kTarget, {}); !s.ok())
        return s;
      absl::StatusOr<std::string> backend =
          r_.string(**target, "backend", "target");
      if (!backend.ok())
        return backend.status();
      absl::StatusOr<std::string> arch = r_.string(**target, "arch", "target");
      if (!arch.ok())
        return arch.status();
      if (backend->empty())
        return r_.error("target.backend", "is empty");
      record_.target = *std::move(backend);
      record_.arch = *std::move(arch);
    }
    if (root.find("source_hash")) {
      absl::StatusOr<std::string> hash = r_.string(root, "source_hash");
      if (!hash.ok())
        return hash.status();
      record_.sourceHash = *std::move(hash);
    }
    return absl::OkStatus();
  }

  detail::FieldReader r_{"specialization record"};
  SpecializationRecord record_;
  absl::flat_hash_map<std::string, size_t> index_;
};

} // namespace

absl::StatusOr<SpecializationRecord>
specializationFromJson(std::string_view json) {
  return RecordReader().read(json);
}

} // namespace kjit::rt
