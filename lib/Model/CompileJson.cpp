//===- CompileJson.cpp - the compile_json that hooks receive --------------===//

#include "kjit/Model/CompileJson.h"

#include "kjit/Model/Json.h"

namespace kjit::rt {

std::string compileJson(const CompileDescription &description) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  w.key("schema").string(kCompileJsonSchema);
  w.key("kernel").string(description.kernel);
  w.key("key").string(description.key);
  w.key("target").string(description.target);
  w.key("device").integer(description.device);
  w.key("warmup").boolean(description.isWarmup);
  w.key("signature").beginObject();
  if (description.record)
    for (const auto &[name, type] : description.record->signature())
      w.key(name).string(type);
  else
    for (const auto &[name, type] : description.signature)
      w.key(name).string(type);
  w.endObject();
  w.key("record");
  if (description.record)
    w.raw(toJson(*description.record));
  else
    w.null();
  w.endObject();
  return out;
}

} // namespace kjit::rt
