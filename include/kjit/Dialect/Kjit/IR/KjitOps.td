//===- KjitOps.td - kjit operations ------------------------*- tablegen -*-===//
//
// Operations of the kjit dialect. docs/Dialect.md explains why each exists
// and which upstream operation was preferred where one fits.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_DIALECT_KJIT_IR_KJITOPS_TD
#define KJIT_DIALECT_KJIT_IR_KJITOPS_TD

include "kjit/Dialect/Kjit/IR/KjitDialect.td"
include "kjit/Dialect/Kjit/IR/KjitTypes.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

def Kjit_KernelOp : Kjit_Op<"kernel", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>,
    HasParent<"::mlir::ModuleOp">]> {
  let summary = "a kernel: the entry point of a launch";
  let description = [{
    A kernel is launched on a grid of programs; one program is one CTA of
    `32 * num_warps` SIMT threads. Kernels return nothing: results are
    written through pointer parameters.

    Parameter names are part of the kernel's interface (the runtime binds
    keyword arguments by name), so the SSA names written in the signature
    are kept in `param_names` and printed back. Each parameter may carry:

    - `kjit.constexpr`: the value is a compile-time constant and joins the
      key; not allowed on pointers.
    - `kjit.do_not_specialize`: no spec key (D / 1 / N) for this parameter.
    - `kjit.do_not_specialize_on_alignment`: never the `D` spec key.
    - `kjit.const`: a pointer the kernel only reads.
    - `kjit.default = <value>`: used when the launch omits the argument;
      `unit` stands for None. Only trailing parameters may have defaults.

    ```mlir
    kjit.kernel @add(%x: !kjit.ptr<f32> {kjit.const}, %n: i32,
                     %BLOCK: i32 {kjit.constexpr, kjit.default = 1024 : i32}) {
      kjit.return
    }
    ```
  }];

  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       StrArrayAttr:$param_names,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);

  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
      "::mlir::FunctionType":$type,
      "::llvm::ArrayRef<::llvm::StringRef>":$paramNames,
      CArg<"::llvm::ArrayRef<::mlir::DictionaryAttr>", "{}">:$argAttrs)>];

  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// Name of parameter `index`, as written in the signature.
    ::llvm::StringRef getParamName(unsigned index);
    /// Whether parameter `index` carries the unit attribute `name`.
    bool hasParamFlag(unsigned index, ::llvm::StringRef name);
  }];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kjit_FuncOp : Kjit_Op<"func", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove,
    HasParent<"::mlir::ModuleOp">]> {
  let summary = "a device function, called from kernels or other functions";
  let description = [{
    A function that runs on the device and is reached through `kjit.call`.
    `noinline` asks code generation to keep it as a real call.

    ```mlir
    kjit.func noinline @scale(%v: f32, %s: f32) -> f32 {
      %r = arith.mulf %v, %s : f32
      kjit.return %r : f32
    }
    ```
  }];

  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       UnitAttr:$noinline,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);

  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
      "::mlir::FunctionType":$type, CArg<"bool", "false">:$noinline)>];

  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Kjit_ReturnOp : Kjit_Op<"return", [
    Pure, ReturnLike, Terminator,
    ParentOneOf<["KernelOp", "FuncOp"]>]> {
  let summary = "return from a kernel or device function";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def Kjit_CallOp : Kjit_Op<"call", [
    CallOpInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "call a device function";
  let description = [{
    ```mlir
    %r = kjit.call @scale(%v, %s) : (f32, f32) -> f32
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$args,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<AnyType>:$results);
  let builders = [OpBuilder<(ins "FuncOp":$callee,
      CArg<"::mlir::ValueRange", "{}">:$args), [{
    $_state.addOperands(args);
    $_state.addAttribute("callee", ::mlir::SymbolRefAttr::get(callee));
    $_state.addTypes(callee.getFunctionType().getResults());
  }]>];
  let extraClassDeclaration = [{
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return (*this)->getAttrOfType<::mlir::SymbolRefAttr>("callee");
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", ::llvm::cast<::mlir::SymbolRefAttr>(callee));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getArgs(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getArgsMutable();
    }
  }];
  let assemblyFormat = [{
    $callee `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
}

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

def Kjit_GlobalOp : Kjit_Op<"global", [
    Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a module global the host may change between launches";
  let description = [{
    The analogue of a Python module global that a Triton kernel reads: the
    host can change its value between launches; a compiled kernel bakes in
    the value it saw, and the runtime checks it has not changed.

    ```mlir
    kjit.global @BLOCK : i32 = 128
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
                       TypedAttrInterface:$value);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Kjit_GetGlobalOp : Kjit_Op<"get_global", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read the value of a module global";
  let description = [{
    Names the global by its symbol, or by a path through nested modules to
    a global of one of them: a global is identified by (symbol, owning
    module), so `@SCALE` and `@inner::@SCALE` are different globals.

    ```mlir
    %b = kjit.get_global @BLOCK : i32
    %s = kjit.get_global @inner::@SCALE : f32
    ```
  }];
  let arguments = (ins SymbolRefAttr:$global);
  let results = (outs Kjit_ScalarType:$result);
  let assemblyFormat = "$global attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Parameters and the grid
//===----------------------------------------------------------------------===//

def Kjit_NullOp : Kjit_Op<"null", [Pure]> {
  let summary = "a null pointer";
  let description = [{
    What specialization puts in place of a pointer parameter bound to None.

    ```mlir
    %p = kjit.null : !kjit.ptr<f32>
    ```
  }];
  let results = (outs Kjit_PointerType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Kjit_CastOp : Kjit_Op<"cast", [Pure]> {
  let summary = "give an unannotated parameter its concrete type";
  let description = [{
    Reads a `!kjit.any` kernel parameter as a concrete type. Specialization
    replaces it by the parameter itself when the launch value has that type
    and rejects the launch otherwise.

    ```mlir
    %n32 = kjit.cast %n : !kjit.any to i32
    ```
  }];
  let arguments = (ins Kjit_AnyValueType:$input);
  let results = (outs Kjit_ParamValueType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Kjit_ProgramIdOp : Kjit_Op<"program_id", [Pure]> {
  let summary = "the id of this program along a grid axis";
  let description = [{
    ```mlir
    %pid = kjit.program_id x
    ```
  }];
  let arguments = (ins Kjit_AxisAttr:$axis);
  let results = (outs I32:$result);
  let builders = [OpBuilder<(ins "Axis":$axis), [{
    build($_builder, $_state, $_builder.getI32Type(), axis);
  }]>];
  let assemblyFormat = "custom<Axis>($axis) attr-dict";
}

def Kjit_NumProgramsOp : Kjit_Op<"num_programs", [Pure]> {
  let summary = "the number of programs along a grid axis";
  let description = [{
    ```mlir
    %n = kjit.num_programs y
    ```
  }];
  let arguments = (ins Kjit_AxisAttr:$axis);
  let results = (outs I32:$result);
  let builders = [OpBuilder<(ins "Axis":$axis), [{
    build($_builder, $_state, $_builder.getI32Type(), axis);
  }]>];
  let assemblyFormat = "custom<Axis>($axis) attr-dict";
}

def Kjit_WarpBarrierOp : Kjit_Op<"warp_barrier"> {
  let summary = "wait for the other threads of this warp";
  let description = [{
    Returns once every thread of the calling thread's warp (threads
    `32 * w` to `32 * w + 31` of the program; fewer in a last, partial
    warp) has reached a `kjit.warp_barrier`, and orders their memory
    accesses: what one of them stored before it, the others load after it.
    The scope of `gpu.barrier`, narrowed to one warp, so that warps that
    exchange data only among their own threads need not wait for each
    other, and a branch that one warp takes and another does not may hold
    it. Every thread of the warp must reach it: the cuda target emits
    `bar.warp.sync 0xffffffff` (a warp that does not arrive whole is
    undefined there); the host backend reports such a warp as warp barrier
    divergence.

    ```mlir
    kjit.warp_barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Kjit_LoadOp : Kjit_Op<"load", [
    AttrSizedOperandSegments,
    OptionalTypesMatchWith<"other has the result type", "result", "other",
                           "$_self">,
    MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "masked load through a kjit pointer";
  let description = [{
    Loads the element at `base[offset]`, or, for a vector result, the
    `N` consecutive elements starting there. A vector is at most 16 bytes
    so that an aligned access becomes one 128-bit load. The optional `mask`
    is one bit for the whole access: when it is false nothing is read and
    the result is `other`, or zero without `other`.

    A constant mask folds: a true one is dropped (with `other`, which only
    a false mask reads), and a load under a false one folds to `other` or
    to zero.

    ```mlir
    %a = kjit.load %x[%i] mask %m : !kjit.ptr<f32>, i32 -> f32
    %v = kjit.load %x[%j] : !kjit.ptr<f32>, i32 -> vector<4xf32>
    ```
  }];
  let arguments = (ins Kjit_PointerType:$base, Kjit_Offset:$offset,
                       Optional<I1>:$mask, Optional<AnyType>:$other);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $base `[` $offset `]` (`mask` $mask^)? (`other` $other^)? attr-dict
    `:` qualified(type($base)) `,` type($offset) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kjit_StoreOp : Kjit_Op<"store", [
    MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "masked store through a kjit pointer";
  let description = [{
    Stores a scalar at `base[offset]`, or a vector of at most 16 bytes at
    the consecutive elements starting there. When the optional `mask` is
    false nothing is written.

    Under the canonicalizer a constant true mask is dropped, and a store
    under a constant false one, which writes nothing, is erased.

    ```mlir
    kjit.store %v, %y[%j] mask %m : vector<4xf32>, !kjit.ptr<f32>, i32
    ```
  }];
  let arguments = (ins AnyType:$value, Kjit_PointerType:$base,
                       Kjit_Offset:$offset, Optional<I1>:$mask);
  let assemblyFormat = [{
    $value `,` $base `[` $offset `]` (`mask` $mask^)? attr-dict
    `:` type($value) `,` qualified(type($base)) `,` type($offset)
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

//===----------------------------------------------------------------------===//
// Matrix units (docs/MatrixUnits.md)
//===----------------------------------------------------------------------===//

def Kjit_TensorDescOp : Kjit_Op<"tensor_desc", [Pure, AttrSizedOperandSegments]> {
  let summary = "describe a row-major matrix in global memory for tile loads";
  let description = [{
    A matrix of `shape[0]` rows and `shape[1]` columns at `base`, element
    `(r, c)` at `base[r * strides[0] + c * strides[1]]` (strides in
    elements; the innermost is the constant 1). The result type names the
    tile each `kjit.tile_load` through it reads. Every shape and stride
    operand is a kernel parameter or a constant, so that a target may build
    a hardware descriptor from the launch's values before the launch.

    ```mlir
    %da = kjit.tensor_desc %a shape [%M, %K] strides [%stride_am, %c1]
        : !kjit.ptr<bf16> -> !kjit.tensor_desc<128x64xbf16>
    ```
  }];
  let arguments = (ins Kjit_PointerType:$base, Variadic<I32>:$shape,
                       Variadic<I32>:$strides);
  let results = (outs Kjit_TensorDescType:$result);
  let assemblyFormat = [{
    $base `shape` ` ` `[` $shape `]` `strides` ` ` `[` $strides `]` attr-dict
    `:` qualified(type($base)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Kjit_TileLoadOp : Kjit_Op<"tile_load", [
    MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "load a tile of a matrix into workgroup memory (collective)";
  let description = [{
    Every thread of the program reaches it together with the same operands,
    as a `gpu.barrier`. The tile's element `(i, j)` is the matrix's
    `(coords[0] + i, coords[1] + j)`, or zero where that lies outside the
    matrix (negative coordinates included), so partial tiles need no mask.
    Its only users are `kjit.mma` operations of the same block.

    ```mlir
    %ta = kjit.tile_load %da[%m0, %k0]
        : !kjit.tensor_desc<128x64xbf16> -> !kjit.tile<128x64xbf16>
    ```
  }];
  let arguments = (ins Kjit_TensorDescType:$desc, Variadic<I32>:$coords);
  let results = (outs Kjit_TileType:$result);
  let assemblyFormat = [{
    $desc `[` $coords `]` attr-dict `:` qualified(type($desc)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Kjit_MmaOp : Kjit_Op<"mma", [
    Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "multiply-accumulate on the matrix units (warpgroup-collective)";
  let description = [{
    The 128 threads of a warpgroup (threads `128w` to `128w + 127`) reach it
    together with the same tiles and `row`. Together they compute the
    64 x N block `A[row .. row + 63][0 .. K) * B + C`, where A is an R x K
    tile and B a K x N tile of one 16-bit float type; each thread holds
    N/2 f32 elements of C and of the result, its fragment, at the
    positions `kjit.mma_coords` gives. The sum's order and intermediate
    rounding are the hardware's.

    ```mlir
    %next = kjit.mma %ta[%row], %tb, %acc
        : !kjit.tile<128x64xbf16>, !kjit.tile<64x256xbf16>, vector<128xf32>
    ```
  }];
  let arguments = (ins Kjit_TileType:$a, I32:$row, Kjit_TileType:$b,
                       VectorOfRankAndType<[1], [F32]>:$acc);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = [{
    $a `[` $row `]` `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,`
    qualified(type($b)) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Kjit_MmaCoordsOp : Kjit_Op<"mma_coords", [
    Pure, AllTypesMatch<["rows", "columns"]>]> {
  let summary = "where this thread's fragment elements sit in a 64 x N block";
  let description = [{
    Element `e` of a thread's `kjit.mma` fragment sits at row
    `16 * (warp % 4) + lane / 4 + 8 * ((e / 2) % 2)` and column
    `8 * (e / 4) + 2 * (lane % 4) + e % 2` of its warpgroup's 64 x N block
    (`lane = tid % 32`, `warp = tid / 32`). For an epilogue of the kernel's
    own (bias, activation, masks).

    ```mlir
    %rows, %cols = kjit.mma_coords n = 256 : vector<128xi32>
    ```
  }];
  let arguments = (ins I64Attr:$n);
  let results = (outs VectorOfRankAndType<[1], [I32]>:$rows,
                      VectorOfRankAndType<[1], [I32]>:$columns);
  let assemblyFormat = "`n` `=` $n attr-dict `:` type($rows)";
  let hasVerifier = 1;
}

def Kjit_MmaStoreOp : Kjit_Op<"mma_store", [
    MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "store a warpgroup's fragments to a row-major matrix";
  let description = [{
    Each thread writes its fragment's element at `(row + r, column + c)`,
    `(r, c)` as `kjit.mma_coords` gives them, to
    `base[(row + r) * stride + column + c]` wherever that lies below
    `bounds` in both dimensions, converted to the pointer's element type
    (`bf16`, `f16` or `f32`) by rounding to nearest even.

    ```mlir
    kjit.mma_store %acc, %c[%row0, %n0] stride %stride_cm bounds [%M, %N]
        : vector<128xf32>, !kjit.ptr<bf16>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$acc,
                       Kjit_PointerType:$base, I32:$row, I32:$column,
                       I32:$stride, I32:$rows, I32:$columns);
  let assemblyFormat = [{
    $acc `,` $base `[` $row `,` $column `]` `stride` $stride
    `bounds` ` ` `[` $rows `,` $columns `]` attr-dict `:` type($acc) `,`
    qualified(type($base))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Kjit_PrintOp : Kjit_Op<"print", [
    MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "print a prefix and values from every thread";
  let description = [{
    The analogue of Triton's `device_print`: each thread that executes it
    prints its program and thread ids, the prefix and the values.

    ```mlir
    kjit.print "x = " %a, %b : i32, f32
    ```
  }];
  let arguments = (ins StrAttr:$prefix,
                       Variadic<AnyTypeOf<[Kjit_ScalarType, Index,
                                           Kjit_PointerType]>>:$args);
  let assemblyFormat = [{
    $prefix ($args^ `:` qualified(type($args)))? attr-dict
  }];
}

def Kjit_AssertOp : Kjit_Op<"assert", [
    MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "device assertion, checked in debug mode";
  let description = [{
    When debug mode is on (`debug=true` or `KJIT_DEBUG=1`) a false
    condition reports the kernel, the program and thread ids and the
    message; otherwise the assertion is removed. An assertion whose
    condition is the constant true can never fail and canonicalizes away
    (one that the block size or a specialized value decides).

    ```mlir
    kjit.assert %ok, "index out of range"
    ```
  }];
  let arguments = (ins I1:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict";
  let hasCanonicalizeMethod = 1;
}

#endif // KJIT_DIALECT_KJIT_IR_KJITOPS_TD
