//===- GlobalPathTest.cpp - the model library's global-name rules ---------===//
//
// The rules that turn a module global's path into the runtime's name
// ("inner::SCALE") and into the text of messages ("SCALE of module
// @inner"), which the compiler, kjit-track-globals and the runtime share.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/GlobalPath.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace rt = kjit::rt;

namespace {

TEST(GlobalPath, AppendJoinsWithTheSeparator) {
  std::string name;
  rt::appendGlobalPathPart(name, "SCALE");
  EXPECT_EQ(name, "SCALE");
  name.clear();
  for (std::string_view part : {"a", "b", "SCALE"})
    rt::appendGlobalPathPart(name, part);
  EXPECT_EQ(name, "a::b::SCALE");
}

TEST(GlobalPath, SplitGivesEveryPartOutermostFirst) {
  EXPECT_EQ(rt::splitGlobalPath("SCALE"),
            std::vector<std::string_view>{"SCALE"});
  EXPECT_EQ(rt::splitGlobalPath("a::b::SCALE"),
            (std::vector<std::string_view>{"a", "b", "SCALE"}));
  EXPECT_EQ(rt::splitGlobalPath("a::"),
            (std::vector<std::string_view>{"a", ""}));
}

TEST(GlobalPath, SplitLeafSeparatesTheModuleFromTheSymbol) {
  rt::GlobalPathLeaf top = rt::splitGlobalPathLeaf("SCALE");
  EXPECT_EQ(top.module, "");
  EXPECT_EQ(top.symbol, "SCALE");
  rt::GlobalPathLeaf nested = rt::splitGlobalPathLeaf("a::b::SCALE");
  EXPECT_EQ(nested.module, "a::b");
  EXPECT_EQ(nested.symbol, "SCALE");
}

TEST(GlobalPath, WellFormedNamesHaveNoEmptyPartAndNoStrayColon) {
  for (std::string_view good : {"SCALE", "inner::SCALE", "a::b::c"})
    EXPECT_TRUE(rt::isGlobalPath(good)) << good;
  for (std::string_view bad :
       {"", "::SCALE", "inner::", "a::::b", "a:b", "a:::b", "inner::S:"})
    EXPECT_FALSE(rt::isGlobalPath(bad)) << bad;
}

TEST(GlobalPath, MessagesSpellTheModuleAsMlirPrintsIt) {
  EXPECT_EQ(rt::spellModulePath("inner"), "@inner");
  EXPECT_EQ(rt::spellModulePath("a::b"), "@a::@b");
  EXPECT_EQ(rt::describeGlobal("SCALE"), "SCALE");
  EXPECT_EQ(rt::describeGlobal("inner::SCALE"), "SCALE of module @inner");
  EXPECT_EQ(rt::describeGlobal("a::b::SCALE"), "SCALE of module @a::@b");
}

} // namespace
