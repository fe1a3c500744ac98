//===- KjitDialect.td - kjit dialect definition ------------*- tablegen -*-===//
//
// The kjit dialect: kernels, device functions, module globals and the few
// operations upstream MLIR has no concept for. Rationale: docs/Dialect.md.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_DIALECT_KJIT_IR_KJITDIALECT_TD
#define KJIT_DIALECT_KJIT_IR_KJITDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kjit_Dialect : Dialect {
  let name = "kjit";
  let cppNamespace = "::kjit";
  let summary = "Kernels for the kjit just-in-time runtime";
  let description = [{
    The kjit dialect describes GPU-style SIMT kernels that the kjit runtime
    binds, specializes, compiles and launches. A module holds kernels
    (`kjit.kernel`), device functions (`kjit.func`) and globals
    (`kjit.global`) whose values the host may change between launches.
    Bodies use upstream arith, math, scf, cf, vector, memref and gpu; kjit
    adds only program ids, loads and stores through kjit pointers, global
    reads, and device print/assert.

    Kernel parameters carry the attributes of the runtime's parameter model:
    `kjit.constexpr`, `kjit.do_not_specialize`,
    `kjit.do_not_specialize_on_alignment`, `kjit.const`, `kjit.unsigned` and
    `kjit.default = <value>`.
  }];
  // Folding a masked-off load without `other` makes its zero an
  // arith.constant (materializeConstant).
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Names of the parameter attributes (on `kjit.kernel` arguments).
    static constexpr ::llvm::StringLiteral kConstexprAttrName = "kjit.constexpr";
    static constexpr ::llvm::StringLiteral kDoNotSpecializeAttrName =
        "kjit.do_not_specialize";
    static constexpr ::llvm::StringLiteral kDoNotSpecializeOnAlignmentAttrName =
        "kjit.do_not_specialize_on_alignment";
    static constexpr ::llvm::StringLiteral kConstAttrName = "kjit.const";
    static constexpr ::llvm::StringLiteral kDefaultAttrName = "kjit.default";
    /// An integer parameter whose launch value is unsigned (u8..u64): the
    /// value stays signless, the signature type and range are unsigned.
    static constexpr ::llvm::StringLiteral kUnsignedAttrName = "kjit.unsigned";
    /// Set by specialization: the parameter (a pointer address or an
    /// integer) is divisible by this many (16: the `D` spec key).
    static constexpr ::llvm::StringLiteral kDivisibilityAttrName =
        "kjit.divisibility";
    /// Set by specialization when the signature type a launch passes for the
    /// parameter is not what its type and `kjit.const` spell: a
    /// SignatureTypeAttr (#kjit.signature<const !kjit.ptr<f32>> for a
    /// read-only tensor, <!kjit.ptr<i8>> for None, <ui64> for an unsigned
    /// integer).
    static constexpr ::llvm::StringLiteral kSignatureTypeAttrName =
        "kjit.signature_type";
    /// Set by specialization: the launch backend's own attributes (plugin
    /// ABI 1.3) that hold for the parameter's value, by name
    /// (["pointer_range_32"]), for a lowering or pass plugin to use.
    static constexpr ::llvm::StringLiteral kSpecAttrsAttrName =
        "kjit.spec_attrs";

  private:
    void registerTypes();
    void registerAttributes();
  public:
  }];
}

class Kjit_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kjit_Dialect, mnemonic, traits>;

class Kjit_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kjit_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Kjit_Axis : I32EnumAttr<"Axis", "a grid axis",
    [I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"y", 1>,
     I32EnumAttrCase<"z", 2>]> {
  let cppNamespace = "::kjit";
  let genSpecializedAttr = 0;
}
def Kjit_AxisAttr : EnumAttr<Kjit_Dialect, Kjit_Axis, "axis">;

def Kjit_SignatureTypeAttr : AttrDef<Kjit_Dialect, "SignatureType"> {
  let mnemonic = "signature";
  let summary = "the signature type a launch passes for a kernel parameter";
  let description = [{
    The value of `kjit.signature_type`, which specialization puts on a
    kernel parameter whose launch signature type is not what the
    parameter's type and `kjit.const` spell. It holds the type the launch
    passes, with its signedness (`ui64`: an unsigned integer; `i64` is a
    signed one), or a `!kjit.ptr`, and whether that pointer is read-only
    (`const`, a tensor the launch marked read-only):

    ```mlir
    %y: !kjit.ptr<f32> {kjit.signature_type = #kjit.signature<const !kjit.ptr<f32>>}
    %p: !kjit.ptr<f32> {kjit.signature_type = #kjit.signature<!kjit.ptr<i8>>}   // None
    %n: i64 {kjit.signature_type = #kjit.signature<ui64>}
    ```

    The runtime's spelling of the same ("*kfp32", "*i8", "u64") is made
    only where text leaves the compiler: the host kernel ABI's signature
    symbol.
  }];
  let parameters = (ins
    AttrParameter<"::mlir::Type",
                  "the type passed: a !kjit.ptr or a scalar">:$type,
    AttrParameter<"bool", "a read-only pointer">:$isConst);
  let builders = [
    AttrBuilderWithInferredContext<(ins "::mlir::Type":$type,
                                        CArg<"bool", "false">:$isConst), [{
      return $_get(type.getContext(), type, isConst);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // KJIT_DIALECT_KJIT_IR_KJITDIALECT_TD
