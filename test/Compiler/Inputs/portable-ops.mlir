// Operations that neither target's conversion to LLVM takes as they are
// (lib/Conversion/ExpandForLLVM.h, and the bit counts and pointer-typed
// operations of kjit-convert-to-gpu): each writes one result to `out`.
kjit.kernel @portable(%out: !kjit.ptr<i32>, %x: !kjit.ptr<i32>,
                      %y: !kjit.ptr<i32>, %a: i32, %b: i32, %pick_x: i1,
                      %big: i64) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %c6 = arith.constant 6 : i32
  %c7 = arith.constant 7 : i32
  %c8 = arith.constant 8 : i32
  %c9 = arith.constant 9 : i32
  %c10 = arith.constant 10 : i32
  %floor = arith.floordivsi %a, %b : i32
  kjit.store %floor, %out[%c0] : i32, !kjit.ptr<i32>, i32
  %ceil = arith.ceildivsi %a, %b : i32
  kjit.store %ceil, %out[%c1] : i32, !kjit.ptr<i32>, i32
  %ceilu = arith.ceildivui %a, %b : i32
  kjit.store %ceilu, %out[%c2] : i32, !kjit.ptr<i32>, i32
  %clz = math.ctlz %b : i32
  kjit.store %clz, %out[%c3] : i32, !kjit.ptr<i32>, i32
  %ctz = math.cttz %a : i32
  kjit.store %ctz, %out[%c4] : i32, !kjit.ptr<i32>, i32
  %pop = math.ctpop %a : i32
  kjit.store %pop, %out[%c5] : i32, !kjit.ptr<i32>, i32
  // vector.step and the masks: the sum of the steps the masks keep.
  %step = vector.step : vector<4xindex>
  %steps = arith.index_cast %step : vector<4xindex> to vector<4xi32>
  %zeros = arith.constant dense<0> : vector<4xi32>
  %first3 = vector.constant_mask [3] : vector<4xi1>
  %kept3 = arith.select %first3, %steps, %zeros : vector<4xi1>, vector<4xi32>
  %sum3 = vector.reduction <add>, %kept3 : vector<4xi32> into i32
  kjit.store %sum3, %out[%c6] : i32, !kjit.ptr<i32>, i32
  %b_index = arith.index_cast %b : i32 to index
  %firstb = vector.create_mask %b_index : vector<4xi1>
  %keptb = arith.select %firstb, %steps, %zeros : vector<4xi1>, vector<4xi32>
  %sumb = vector.reduction <add>, %keptb : vector<4xi32> into i32
  kjit.store %sumb, %out[%c7] : i32, !kjit.ptr<i32>, i32
  // A pointer chosen by a branch (the canonicalizer makes it a select).
  %source = scf.if %pick_x -> !kjit.ptr<i32> {
    scf.yield %x : !kjit.ptr<i32>
  } else {
    scf.yield %y : !kjit.ptr<i32>
  }
  %picked = kjit.load %source[%c0] : !kjit.ptr<i32>, i32 -> i32
  kjit.store %picked, %out[%c8] : i32, !kjit.ptr<i32>, i32
  // A mask bound beyond 32 bits keeps every lane (not the bound's low
  // bits), and an index is counted in 64 bits (found by fuzzing).
  %big_index = arith.index_cast %big : i64 to index
  %firstbig = vector.create_mask %big_index : vector<4xi1>
  %keptbig = arith.select %firstbig, %steps, %zeros : vector<4xi1>, vector<4xi32>
  %sumbig = vector.reduction <add>, %keptbig : vector<4xi32> into i32
  kjit.store %sumbig, %out[%c9] : i32, !kjit.ptr<i32>, i32
  %clz_index = math.ctlz %b_index : index
  %clz64 = arith.index_cast %clz_index : index to i32
  kjit.store %clz64, %out[%c10] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
