//===- Dependencies.cpp - kernel keys and the globals they read -----------===//
//
// Hashing is a Tarjan walk over the call graph: each strongly connected
// component is finished once all functions it calls are, so a function in a
// call cycle gets a key that does not depend on where the walk started, and
// every function is hashed once however many callers share it.
//
//===----------------------------------------------------------------------===//

#include "kjit/Analysis/Dependencies.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <deque>

using namespace mlir;
using namespace kjit;

namespace {

using Digest = std::array<uint8_t, 32>;

/// An output stream that feeds everything written to it into a SHA-256, so
/// that hashing a function's IR never materializes its text.
class HashStream : public llvm::raw_ostream {
public:
  explicit HashStream(llvm::SHA256 &sha) : sha(sha) {}
  ~HashStream() override { flush(); }

private:
  void write_impl(const char *ptr, size_t size) override {
    sha.update(StringRef(ptr, size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  llvm::SHA256 &sha;
  uint64_t position = 0;
};

/// Separates the fields fed to a hash so that ("ab","c") != ("a","bc").
void hashField(llvm::SHA256 &sha, StringRef field) {
  uint64_t size = field.size();
  sha.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&size),
                               sizeof(size)));
  sha.update(field);
}

std::string toHex(const Digest &digest) {
  return llvm::toHex(digest, /*LowerCase=*/true);
}

/// Whether calls to `fn` must stay calls: `noinline` on kjit.func,
/// `no_inline` on func.func.
bool isNoinline(Operation *fn) {
  return fn->hasAttr("noinline") || fn->hasAttr("no_inline");
}

/// The start line of `fn` in its source, or 0 when it has none (IR built in
/// memory). Only the line: a file path would make keys machine-specific.
unsigned getStartLine(Operation *fn) {
  if (auto loc = fn->getLoc()->findInstanceOf<FileLineColLoc>())
    return loc.getLine();
  return 0;
}

bool isRecordAttr(StringRef name) {
  return name == DependencyAnalysis::kContentHashAttrName ||
         name == DependencyAnalysis::kKeyAttrName ||
         name == DependencyAnalysis::kUsedGlobalsAttrName;
}

struct GlobalRead {
  SymbolRefAttr name;
  TypedAttr value;
};

/// Per-function state of the walk. Held in a deque so references stay valid
/// while the map grows.
struct FunctionState {
  Operation *fn = nullptr;
  unsigned index = 0, lowlink = 0;
  bool visited = false, onStack = false, finished = false, failed = false;
  Digest ownDigest{};
  /// Distinct callees in the order their first call appears.
  SmallVector<Operation *> callees;
  /// Globals read in this function's own body.
  SmallVector<GlobalRead> reads;
  DependencyRecord record;
};

} // namespace

struct DependencyAnalysis::Impl {
  explicit Impl(Operation *root) : root(root) {}

  FailureOr<const DependencyRecord *> getRecord(FunctionOpInterface fn);

  FunctionState &getState(Operation *fn);
  void hashOwnContent(FunctionState &state);
  SymbolRefAttr getGlobalPath(kjit::GlobalOp global);
  LogicalResult finishComponent(ArrayRef<FunctionState *> members);
  LogicalResult mergeGlobals(ArrayRef<FunctionState *> members,
                             SmallVectorImpl<GlobalUse> &merged);

  Operation *root;
  SymbolTableCollection symbolTables;
  std::deque<FunctionState> storage;
  llvm::DenseMap<Operation *, FunctionState *> states;
  unsigned nextIndex = 0;
  unsigned numHashed = 0;
};

FunctionState &DependencyAnalysis::Impl::getState(Operation *fn) {
  FunctionState *&slot = states[fn];
  if (!slot) {
    slot = &storage.emplace_back();
    slot->fn = fn;
  }
  return *slot;
}

SymbolRefAttr DependencyAnalysis::Impl::getGlobalPath(kjit::GlobalOp global) {
  // The owning module, named by its path from the root, is part of a
  // global's identity: two modules may each have their own @SCALE.
  SmallVector<FlatSymbolRefAttr> path;
  path.push_back(FlatSymbolRefAttr::get(global.getSymNameAttr()));
  for (Operation *table = global->getParentOp(); table && table != root;
       table = table->getParentOp()) {
    auto name =
        table->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    path.push_back(FlatSymbolRefAttr::get(
        name ? name : StringAttr::get(global.getContext(), "")));
  }
  std::reverse(path.begin(), path.end());
  return SymbolRefAttr::get(path.front().getAttr(),
                            ArrayRef(path).drop_front());
}

void DependencyAnalysis::Impl::hashOwnContent(FunctionState &state) {
  Operation *fn = state.fn;
  ++numHashed;
  llvm::SHA256 sha;
  {
    HashStream os(sha);
    // The function op itself: name, attributes (signature, parameter names
    // and attributes, noinline, ...) and start line, but not a persisted
    // record, which describes the content rather than being part of it.
    os << "kjit-function-v1\n"
       << fn->getName() << "\nline " << getStartLine(fn) << '\n';
    for (NamedAttribute attr : fn->getAttrDictionary())
      if (!isRecordAttr(attr.getName().getValue()))
        os << attr.getName().getValue() << " = " << attr.getValue() << '\n';
    // The body in generic form, numbered from the function: SSA names,
    // whitespace and comments of the source have no influence, and neither
    // do the locations of the operations (debug info is off).
    OpPrintingFlags flags;
    flags.printGenericOpForm().useLocalScope();
    AsmState asmState(fn, flags);
    for (Block &block : cast<FunctionOpInterface>(fn).getFunctionBody()) {
      os << "block(";
      llvm::interleaveComma(block.getArgumentTypes(), os);
      os << ")\n";
      for (Operation &op : block) {
        op.print(os, asmState);
        os << '\n';
      }
    }
  }
  state.ownDigest = sha.final();

  // Callees, in first-call order, and the globals this body reads.
  llvm::SmallPtrSet<Operation *, 8> seen;
  fn->walk([&](CallOpInterface call) {
    Operation *callee = call.resolveCallableInTable(&symbolTables);
    if (callee && isa<FunctionOpInterface>(callee) &&
        seen.insert(callee).second)
      state.callees.push_back(callee);
  });
  fn->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrDictionary()) {
      auto ref = dyn_cast<SymbolRefAttr>(attr.getValue());
      if (!ref)
        continue;
      auto global = dyn_cast_or_null<kjit::GlobalOp>(
          symbolTables.lookupNearestSymbolFrom(op, ref));
      if (global)
        state.reads.push_back({getGlobalPath(global), global.getValue()});
    }
  });
}

std::optional<DependencyRecord>
DependencyAnalysis::readPersisted(Operation *fn) {
  auto content =
      fn->getAttrOfType<StringAttr>(DependencyAnalysis::kContentHashAttrName);
  auto key = fn->getAttrOfType<StringAttr>(DependencyAnalysis::kKeyAttrName);
  auto globals =
      fn->getAttrOfType<ArrayAttr>(DependencyAnalysis::kUsedGlobalsAttrName);
  if (!content || !key || !globals)
    return std::nullopt;
  DependencyRecord record;
  record.contentHash = content.getValue().str();
  record.key = key.getValue().str();
  for (Attribute entry : globals) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    auto name = dict ? dict.getAs<SymbolRefAttr>("name") : SymbolRefAttr();
    auto value = dict ? dict.getAs<TypedAttr>("value") : TypedAttr();
    if (!name || !value)
      return std::nullopt;
    record.globals.push_back({name, value});
  }
  return record;
}

static std::string printAttr(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << attr;
  return text;
}

LogicalResult
DependencyAnalysis::Impl::mergeGlobals(ArrayRef<FunctionState *> members,
                                       SmallVectorImpl<GlobalUse> &merged) {
  // Values this component reads itself, with the current module's values.
  llvm::DenseMap<Attribute, TypedAttr> values;
  llvm::DenseMap<Attribute, Operation *> source; // nullptr: read directly
  for (FunctionState *member : members)
    for (const GlobalRead &read : member->reads)
      if (values.try_emplace(read.name, read.value).second)
        source[read.name] = nullptr;

  // Values recorded by callees outside the component, possibly from an
  // earlier analysis.
  for (FunctionState *member : members) {
    for (Operation *callee : member->callees) {
      FunctionState &calleeState = *states.lookup(callee);
      if (llvm::is_contained(members, &calleeState))
        continue;
      for (const GlobalUse &use : calleeState.record.globals) {
        auto [it, inserted] = values.try_emplace(use.name, use.value);
        if (inserted) {
          source[use.name] = callee;
          continue;
        }
        if (it->second == use.value)
          continue;
        auto calleeName = cast<SymbolOpInterface>(callee).getNameAttr();
        Operation *other = source.lookup(use.name);
        InFlightDiagnostic diag =
            member->fn->emitError()
            << "global " << use.name << " has value " << printAttr(it->second)
            << " when analysing '@"
            << cast<SymbolOpInterface>(member->fn).getName()
            << (other
                    ? "' (through '@" +
                          cast<SymbolOpInterface>(other).getName().str() + "')"
                    : std::string("'"))
            << ", but its callee '@" << calleeName.getValue()
            << "' was analysed with value " << printAttr(use.value)
            << "; a function's record keeps the values of its first "
               "analysis, so re-analyse '@"
            << calleeName.getValue() << "' or restore the value";
        diag.attachNote(callee->getLoc())
            << "callee '@" << calleeName.getValue() << "' is defined here";
        return failure();
      }
    }
  }
  for (auto &[name, value] : values)
    merged.push_back({cast<SymbolRefAttr>(name), value});
  llvm::sort(merged, [](const GlobalUse &a, const GlobalUse &b) {
    return printAttr(a.name) < printAttr(b.name);
  });
  return success();
}

LogicalResult
DependencyAnalysis::Impl::finishComponent(ArrayRef<FunctionState *> members) {
  bool isCycle =
      members.size() > 1 ||
      llvm::is_contained(members.front()->callees, members.front()->fn);

  // Content hashes. Outside cycles: own content, then each callee's content
  // hash and noinline flag in call order. In a cycle every member also hashes
  // a digest of the whole component, members taken in symbol order, so the
  // result does not depend on which member the walk entered first.
  auto addCallee = [&](llvm::SHA256 &sha, Operation *callee) {
    hashField(sha, states.lookup(callee)->record.contentHash);
    hashField(sha, isNoinline(callee) ? "noinline" : "inline");
  };
  if (!isCycle) {
    FunctionState &state = *members.front();
    llvm::SHA256 sha;
    hashField(sha, "kjit-content-v1");
    sha.update(state.ownDigest);
    for (Operation *callee : state.callees)
      addCallee(sha, callee);
    state.record.contentHash = toHex(sha.final());
  } else {
    SmallVector<FunctionState *> sorted(members);
    llvm::sort(sorted, [](FunctionState *a, FunctionState *b) {
      return cast<SymbolOpInterface>(a->fn).getName() <
             cast<SymbolOpInterface>(b->fn).getName();
    });
    llvm::SHA256 componentSha;
    hashField(componentSha, "kjit-cycle-v1");
    for (FunctionState *member : sorted) {
      hashField(componentSha, cast<SymbolOpInterface>(member->fn).getName());
      componentSha.update(member->ownDigest);
      hashField(componentSha, isNoinline(member->fn) ? "noinline" : "inline");
    }
    for (FunctionState *member : sorted)
      for (Operation *callee : member->callees)
        if (!llvm::is_contained(members, states.lookup(callee)))
          addCallee(componentSha, callee);
    Digest component = componentSha.final();
    for (FunctionState *member : members) {
      llvm::SHA256 sha;
      hashField(sha, "kjit-content-v1");
      sha.update(member->ownDigest);
      sha.update(component);
      member->record.contentHash = toHex(sha.final());
    }
  }

  // Global snapshots and keys. A record persisted by an earlier analysis of
  // the same content is reused as it is: its key and values are those of
  // the first analysis.
  for (FunctionState *member : members) {
    if (std::optional<DependencyRecord> persisted = readPersisted(member->fn);
        persisted && persisted->contentHash == member->record.contentHash) {
      member->record = std::move(*persisted);
      continue;
    }
    member->record.globals.clear();
    if (failed(mergeGlobals(members, member->record.globals)))
      return failure();
    llvm::SHA256 sha;
    hashField(sha, "kjit-key-v1");
    hashField(sha, member->record.contentHash);
    for (const GlobalUse &use : member->record.globals) {
      hashField(sha, printAttr(use.name));
      hashField(sha, printAttr(use.value));
    }
    member->record.key = toHex(sha.final());
  }
  return success();
}

FailureOr<const DependencyRecord *>
DependencyAnalysis::Impl::getRecord(FunctionOpInterface fn) {
  FunctionState &start = getState(fn);
  if (start.failed)
    return failure();
  if (start.finished)
    return &start.record;

  // Iterative Tarjan: long call chains must not exhaust the stack.
  struct Frame {
    FunctionState *state;
    unsigned nextCallee;
  };
  SmallVector<Frame> frames;
  SmallVector<FunctionState *> componentStack;
  auto enter = [&](FunctionState &state) {
    state.visited = true;
    state.index = state.lowlink = nextIndex++;
    state.onStack = true;
    componentStack.push_back(&state);
    hashOwnContent(state);
    frames.push_back({&state, 0});
  };
  enter(start);
  while (!frames.empty()) {
    Frame &frame = frames.back();
    FunctionState &state = *frame.state;
    if (frame.nextCallee < state.callees.size()) {
      FunctionState &callee = getState(state.callees[frame.nextCallee++]);
      if (callee.failed) {
        state.failed = true;
        continue;
      }
      if (callee.finished)
        continue;
      if (!callee.visited) {
        enter(callee);
        continue;
      }
      if (callee.onStack)
        state.lowlink = std::min(state.lowlink, callee.index);
      continue;
    }
    frames.pop_back();
    if (!frames.empty())
      frames.back().state->lowlink =
          std::min(frames.back().state->lowlink, state.lowlink);
    if (state.lowlink != state.index)
      continue;
    SmallVector<FunctionState *> members;
    FunctionState *member;
    do {
      member = componentStack.pop_back_val();
      member->onStack = false;
      members.push_back(member);
    } while (member != &state);
    bool calleeFailed =
        llvm::any_of(members, [](FunctionState *m) { return m->failed; });
    if (calleeFailed || failed(finishComponent(members))) {
      for (FunctionState *m : members)
        m->failed = true;
      for (Frame &f : frames)
        f.state->failed = true;
      continue;
    }
    for (FunctionState *m : members)
      m->finished = true;
  }
  if (start.failed)
    return failure();
  return &start.record;
}

//===----------------------------------------------------------------------===//
// DependencyAnalysis
//===----------------------------------------------------------------------===//

DependencyAnalysis::DependencyAnalysis(Operation *root)
    : impl(std::make_unique<Impl>(root)) {}

DependencyAnalysis::~DependencyAnalysis() = default;

FailureOr<const DependencyRecord *>
DependencyAnalysis::getRecord(FunctionOpInterface fn) {
  return impl->getRecord(fn);
}

FailureOr<DependencyAnalysis::FunctionRecords>
DependencyAnalysis::getAllRecords() {
  FunctionRecords records;
  bool ok = true;
  impl->root->walk([&](FunctionOpInterface fn) {
    FailureOr<const DependencyRecord *> record = getRecord(fn);
    if (failed(record))
      ok = false;
    else
      records.push_back({fn, *record});
  });
  if (!ok)
    return failure();
  return records;
}

unsigned DependencyAnalysis::getNumFunctionsHashed() const {
  return impl->numHashed;
}

void DependencyAnalysis::persist(FunctionOpInterface fn,
                                 const DependencyRecord &record) {
  MLIRContext *context = fn.getContext();
  Builder builder(context);
  SmallVector<Attribute> globals;
  for (const GlobalUse &use : record.globals)
    globals.push_back(
        builder.getDictionaryAttr({builder.getNamedAttr("name", use.name),
                                   builder.getNamedAttr("value", use.value)}));
  fn->setAttr(kContentHashAttrName, builder.getStringAttr(record.contentHash));
  fn->setAttr(kKeyAttrName, builder.getStringAttr(record.key));
  fn->setAttr(kUsedGlobalsAttrName, builder.getArrayAttr(globals));
}

void DependencyAnalysis::forget(FunctionOpInterface fn) {
  fn->removeAttr(kContentHashAttrName);
  fn->removeAttr(kKeyAttrName);
  fn->removeAttr(kUsedGlobalsAttrName);
}

SmallVector<GlobalChange>
DependencyAnalysis::findChangedGlobals(Operation *root,
                                       const DependencyRecord &record) {
  SmallVector<GlobalChange> changes;
  SymbolTableCollection symbolTables;
  for (const GlobalUse &use : record.globals) {
    auto global = dyn_cast_or_null<kjit::GlobalOp>(
        symbolTables.lookupSymbolIn(root, use.name));
    TypedAttr current = global ? global.getValue() : TypedAttr();
    if (current != use.value)
      changes.push_back({use.name, use.value, current});
  }
  return changes;
}
