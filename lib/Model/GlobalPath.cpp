//===- GlobalPath.cpp - how a module global is named ----------------------===//

#include "kjit/Model/GlobalPath.h"

namespace kjit::rt {

void appendGlobalPathPart(std::string &name, std::string_view part) {
  if (!name.empty())
    name += kGlobalPathSeparator;
  name += part;
}

std::vector<std::string_view> splitGlobalPath(std::string_view name) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t split = name.find(kGlobalPathSeparator);
    parts.push_back(name.substr(0, split));
    if (split == std::string_view::npos)
      return parts;
    name = name.substr(split + kGlobalPathSeparator.size());
  }
}

GlobalPathLeaf splitGlobalPathLeaf(std::string_view name) {
  size_t split = name.rfind(kGlobalPathSeparator);
  if (split == std::string_view::npos)
    return {std::string_view(), name};
  return {name.substr(0, split),
          name.substr(split + kGlobalPathSeparator.size())};
}

bool isGlobalPath(std::string_view name) {
  for (std::string_view part : splitGlobalPath(name))
    if (part.empty() || part.find(':') != std::string_view::npos)
      return false;
  return true;
}

std::string spellModulePath(std::string_view module) {
  std::string spelled;
  for (std::string_view part : splitGlobalPath(module)) {
    if (!spelled.empty())
      spelled += kGlobalPathSeparator;
    spelled += '@';
    spelled += part;
  }
  return spelled;
}

std::string describeGlobal(std::string_view name) {
  if (name.find(kGlobalPathSeparator) == std::string_view::npos)
    return std::string(name);
  GlobalPathLeaf leaf = splitGlobalPathLeaf(name);
  std::string text(leaf.symbol);
  text += " of module ";
  text += spellModulePath(leaf.module);
  return text;
}

} // namespace kjit::rt
