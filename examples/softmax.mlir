// Row-wise softmax of a float32 matrix with row stride `stride`:
//   out[r, c] = exp(in[r, c] - max_r) / sum_c' exp(in[r, c'] - max_r)
//
// One program per row, written to run at memory bandwidth on a GPU:
//
// - Every thread owns SLOTS = 8 vectors of 4 columns, slot k at column
//   4 * (k * threads + tid) of a chunk of 32 * threads columns: a warp's
//   slot is 512 contiguous bytes, each access one vector<4xf32> (a single
//   ld.global.v4 / st.global.v4 once specialization proves the pointers and
//   the row stride 16-byte aligned), and a chunk's 8 loads come before any
//   use, so 8 are in flight per thread.
// - A row of at most one chunk (n_cols <= 1024 * num_warps) is read once
//   and kept in registers (the slots are an alloca indexed by constants
//   once the slot loops are unrolled): the thread's max m_t and
//   e = exp(x - m_t) with its sum s_t, then the block reductions, then
//   out = e * (exp(m_t - max) / sum): one exp per element, no second read.
//   A thread whose slots all lie inside the row takes a path without a
//   branch between the loads; one at the row's end checks every slot.
// - A longer row takes an online pass (the running sum rescaled by
//   exp(m_old - m_new) per chunk), the same reductions, then a second read
//   (mostly from L2) writing exp(x - max) / sum.
// - exp(d) is exp2(d * log2(e)), as Triton computes it: one ex2.approx per
//   element on the GPU (libdevice's __nv_exp2f) instead of __nv_expf's
//   sequence; the subtraction comes first, so the error stays near ex2's
//   two ulp for the exponents that matter.
// - Cross-thread reductions go through workgroup memory with two barriers
//   each: every thread stores its value, the first warp folds slots tid,
//   tid + 32, ... into 32 lane slots, and every thread folds those 32
//   (broadcast reads). Max and sum have their own arrays, so no barrier
//   guards a reuse: four barriers per row instead of the tree's fifteen.
//   The host backend has no warp shuffle, so the kernel uses none.
// - Columns past the row's end read as -inf; the last partial vector of a
//   row (n_cols % 4 != 0) is read and written element by element. An
//   unaligned row stride stays correct: the cuda lowering cannot prove 16
//   bytes and splits the vector accesses into scalar ones.
//
// Launch: grid = number of rows, stride >= n_cols, at most 1024 threads
// (num_warps <= 32); fastest with the smallest power-of-two num_warps with
// 1024 * num_warps >= n_cols (1 for 1024 columns, 8 for 8192).

memref.global "private" @max_partials : memref<1024xf32, #gpu.address_space<workgroup>>
memref.global "private" @max_lanes : memref<32xf32, #gpu.address_space<workgroup>> {alignment = 16}
memref.global "private" @sum_partials : memref<1024xf32, #gpu.address_space<workgroup>>
memref.global "private" @sum_lanes : memref<32xf32, #gpu.address_space<workgroup>> {alignment = 16}

kjit.kernel @softmax(%in: !kjit.ptr<f32> {kjit.const},
                     %out: !kjit.ptr<f32>,
                     %n_cols: i32,
                     %stride: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  %slots = arith.constant 8 : index
  %i0 = arith.constant 0 : i32
  %i4 = arith.constant 4 : i32
  %i7 = arith.constant 7 : i32
  %i32 = arith.constant 32 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %log2e = arith.constant 1.44269504 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %neg_inf4 = arith.constant dense<0xFF800000> : vector<4xf32>
  %log2e4 = arith.constant dense<1.44269504> : vector<4xf32>
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %fits = arith.cmpi ule, %threads_index, %c1024 : index
  kjit.assert %fits, "softmax runs at most 1024 threads per program"
  // Overlapping rows would be read by one program while another writes.
  %apart = arith.cmpi sge, %stride, %n_cols : i32
  kjit.assert %apart, "softmax rows overlap: stride < n_cols"
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %row = kjit.program_id x
  %row_start = arith.muli %row, %stride : i32
  // Column of slot 0, distance between slots, columns per chunk, and the
  // end of this thread's last slot in a chunk.
  %lane_col = arith.muli %tid, %i4 : i32
  %slot_step = arith.muli %threads, %i4 : i32
  %chunk = arith.muli %threads, %i32 : i32
  %last_slot = arith.muli %slot_step, %i7 : i32
  %last_col = arith.addi %lane_col, %last_slot : i32
  %lane_end = arith.addi %last_col, %i4 : i32
  %resident = arith.cmpi sle, %n_cols, %chunk : i32
  %all_full = arith.cmpi sle, %lane_end, %n_cols : i32
  %fast = arith.andi %resident, %all_full : i1
  // One buffer per path, so that the fast path's stays in registers even
  // where the others' loops are not unrolled.
  %fast_buf = memref.alloca() : memref<8xvector<4xf32>>
  %edge_buf = memref.alloca() : memref<8xvector<4xf32>>
  %long_buf = memref.alloca() : memref<8xvector<4xf32>>

  // This thread's maximum m_t and sum s_t of exp(x - m_t) over its columns.
  %m_t, %s_t = scf.if %fast -> (f32, f32) {
    // The whole row is in registers and all 8 slots are inside it: 8
    // independent vector loads, no branch between them.
    scf.for %k = %c0 to %slots step %c1 {
      %k32 = arith.index_cast %k : index to i32
      %slot_col = arith.muli %k32, %slot_step : i32
      %col = arith.addi %lane_col, %slot_col : i32
      %i = arith.addi %row_start, %col : i32
      %v = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      memref.store %v, %fast_buf[%k] : memref<8xvector<4xf32>>
    }
    %m = scf.for %k = %c0 to %slots step %c1 iter_args(%acc = %neg_inf) -> (f32) {
      %v = memref.load %fast_buf[%k] : memref<8xvector<4xf32>>
      %vm = vector.reduction <maximumf>, %v : vector<4xf32> into f32
      %next = arith.maximumf %acc, %vm : f32
      scf.yield %next : f32
    }
    // A thread whose columns are all -inf keeps a sum of 0, not NaN.
    %empty = arith.cmpf oeq, %m, %neg_inf : f32
    %shift = arith.select %empty, %zero, %m : f32
    %shift4 = vector.broadcast %shift : f32 to vector<4xf32>
    %s = scf.for %k = %c0 to %slots step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %fast_buf[%k] : memref<8xvector<4xf32>>
      %d = arith.subf %v, %shift4 : vector<4xf32>
      %d2 = arith.mulf %d, %log2e4 : vector<4xf32>
      %e = math.exp2 %d2 : vector<4xf32>
      memref.store %e, %fast_buf[%k] : memref<8xvector<4xf32>>
      %es = vector.reduction <add>, %e : vector<4xf32> into f32
      %sum = arith.addf %acc, %es : f32
      scf.yield %sum : f32
    }
    scf.yield %m, %s : f32, f32
  } else {
    %m_slow, %s_slow = scf.if %resident -> (f32, f32) {
      // The row is in registers but this thread's slots reach past its
      // end: each slot is checked, a partial vector (n_cols % 4 != 0) is
      // read element by element, columns past the end are -inf.
      %m = scf.for %k = %c0 to %slots step %c1 iter_args(%acc = %neg_inf) -> (f32) {
        %k32 = arith.index_cast %k : index to i32
        %slot_col = arith.muli %k32, %slot_step : i32
        %col = arith.addi %lane_col, %slot_col : i32
        %i = arith.addi %row_start, %col : i32
        %end = arith.addi %col, %i4 : i32
        %full = arith.cmpi sle, %end, %n_cols : i32
        %v = scf.if %full -> (vector<4xf32>) {
          %w = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> vector<4xf32>
          scf.yield %w : vector<4xf32>
        } else {
          %w = scf.for %j = %c0 to %c4 step %c1 iter_args(%part = %neg_inf4) -> (vector<4xf32>) {
            %j32 = arith.index_cast %j : index to i32
            %c = arith.addi %col, %j32 : i32
            %live = arith.cmpi slt, %c, %n_cols : i32
            %ij = arith.addi %row_start, %c : i32
            %x = kjit.load %in[%ij] mask %live other %neg_inf : !kjit.ptr<f32>, i32 -> f32
            %next = vector.insert %x, %part[%j] : f32 into vector<4xf32>
            scf.yield %next : vector<4xf32>
          }
          scf.yield %w : vector<4xf32>
        }
        memref.store %v, %edge_buf[%k] : memref<8xvector<4xf32>>
        %vm = vector.reduction <maximumf>, %v : vector<4xf32> into f32
        %next = arith.maximumf %acc, %vm : f32
        scf.yield %next : f32
      }
      %empty = arith.cmpf oeq, %m, %neg_inf : f32
      %shift = arith.select %empty, %zero, %m : f32
      %shift4 = vector.broadcast %shift : f32 to vector<4xf32>
      %s = scf.for %k = %c0 to %slots step %c1 iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %edge_buf[%k] : memref<8xvector<4xf32>>
        %d = arith.subf %v, %shift4 : vector<4xf32>
        %d2 = arith.mulf %d, %log2e4 : vector<4xf32>
        %e = math.exp2 %d2 : vector<4xf32>
        memref.store %e, %edge_buf[%k] : memref<8xvector<4xf32>>
        %es = vector.reduction <add>, %e : vector<4xf32> into f32
        %sum = arith.addf %acc, %es : f32
        scf.yield %sum : f32
      }
      scf.yield %m, %s : f32, f32
    } else {
      // A row longer than a chunk: an online pass, the running sum
      // rescaled to each new maximum. Per chunk, the 8 loads come first
      // (unchecked where the chunk is full for this thread).
      %m, %s = scf.for %chunk_start = %i0 to %n_cols step %chunk
          iter_args(%m_run = %neg_inf, %s_run = %zero) -> (f32, f32) : i32 {
        %chunk_col = arith.addi %chunk_start, %lane_col : i32
        %chunk_end = arith.addi %chunk_start, %lane_end : i32
        %chunk_full = arith.cmpi sle, %chunk_end, %n_cols : i32
        scf.if %chunk_full {
          scf.for %k = %c0 to %slots step %c1 {
            %k32 = arith.index_cast %k : index to i32
            %slot_col = arith.muli %k32, %slot_step : i32
            %col = arith.addi %chunk_col, %slot_col : i32
            %i = arith.addi %row_start, %col : i32
            %v = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> vector<4xf32>
            memref.store %v, %long_buf[%k] : memref<8xvector<4xf32>>
          }
        } else {
          scf.for %k = %c0 to %slots step %c1 {
            %k32 = arith.index_cast %k : index to i32
            %slot_col = arith.muli %k32, %slot_step : i32
            %col = arith.addi %chunk_col, %slot_col : i32
            %i = arith.addi %row_start, %col : i32
            %end = arith.addi %col, %i4 : i32
            %full = arith.cmpi sle, %end, %n_cols : i32
            %v = scf.if %full -> (vector<4xf32>) {
              %w = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> vector<4xf32>
              scf.yield %w : vector<4xf32>
            } else {
              %w = scf.for %j = %c0 to %c4 step %c1 iter_args(%part = %neg_inf4) -> (vector<4xf32>) {
                %j32 = arith.index_cast %j : index to i32
                %c = arith.addi %col, %j32 : i32
                %live = arith.cmpi slt, %c, %n_cols : i32
                %ij = arith.addi %row_start, %c : i32
                %x = kjit.load %in[%ij] mask %live other %neg_inf : !kjit.ptr<f32>, i32 -> f32
                %next = vector.insert %x, %part[%j] : f32 into vector<4xf32>
                scf.yield %next : vector<4xf32>
              }
              scf.yield %w : vector<4xf32>
            }
            memref.store %v, %long_buf[%k] : memref<8xvector<4xf32>>
          }
        }
        %cm = scf.for %k = %c0 to %slots step %c1 iter_args(%acc = %neg_inf) -> (f32) {
          %v = memref.load %long_buf[%k] : memref<8xvector<4xf32>>
          %vm = vector.reduction <maximumf>, %v : vector<4xf32> into f32
          %next = arith.maximumf %acc, %vm : f32
          scf.yield %next : f32
        }
        %m_new = arith.maximumf %m_run, %cm : f32
        %empty = arith.cmpf oeq, %m_new, %neg_inf : f32
        %shift = arith.select %empty, %zero, %m_new : f32
        // exp(-inf) = 0 rescales the empty start away.
        %old = arith.subf %m_run, %shift : f32
        %old2 = arith.mulf %old, %log2e : f32
        %rescale = math.exp2 %old2 : f32
        %s_old = arith.mulf %s_run, %rescale : f32
        %shift4 = vector.broadcast %shift : f32 to vector<4xf32>
        %s_new = scf.for %k = %c0 to %slots step %c1 iter_args(%acc = %s_old) -> (f32) {
          %v = memref.load %long_buf[%k] : memref<8xvector<4xf32>>
          %d = arith.subf %v, %shift4 : vector<4xf32>
          %d2 = arith.mulf %d, %log2e4 : vector<4xf32>
          %e = math.exp2 %d2 : vector<4xf32>
          %es = vector.reduction <add>, %e : vector<4xf32> into f32
          %sum = arith.addf %acc, %es : f32
          scf.yield %sum : f32
        }
        scf.yield %m_new, %s_new : f32, f32
      }
      scf.yield %m, %s : f32, f32
    }
    scf.yield %m_slow, %s_slow : f32, f32
  }

  // Maximum of the row: every thread's m_t, then 32 lane slots, then all.
  %max_partials = memref.get_global @max_partials : memref<1024xf32, #gpu.address_space<workgroup>>
  %max_lanes = memref.get_global @max_lanes : memref<32xf32, #gpu.address_space<workgroup>>
  memref.store %m_t, %max_partials[%tid_index] : memref<1024xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %first_warp = arith.cmpi ult, %tid_index, %c32 : index
  scf.if %first_warp {
    %lane_max = scf.for %t = %tid_index to %threads_index step %c32
        iter_args(%acc = %neg_inf) -> (f32) {
      %x = memref.load %max_partials[%t] : memref<1024xf32, #gpu.address_space<workgroup>>
      %next = arith.maximumf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %lane_max, %max_lanes[%tid_index] : memref<32xf32, #gpu.address_space<workgroup>>
  }
  gpu.barrier
  %row_max = scf.for %t = %c0 to %c32 step %c4 iter_args(%acc = %neg_inf) -> (f32) {
    %x = vector.load %max_lanes[%t] : memref<32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %xm = vector.reduction <maximumf>, %x : vector<4xf32> into f32
    %next = arith.maximumf %acc, %xm : f32
    scf.yield %next : f32
  }

  // Sum of the row: each thread's sum rescaled from m_t to the row's
  // maximum (exp(-inf - max) = 0 for a thread without columns).
  %to_row = arith.subf %m_t, %row_max : f32
  %to_row2 = arith.mulf %to_row, %log2e : f32
  %scale_t = math.exp2 %to_row2 : f32
  %s_row_t = arith.mulf %s_t, %scale_t : f32
  %sum_partials = memref.get_global @sum_partials : memref<1024xf32, #gpu.address_space<workgroup>>
  %sum_lanes = memref.get_global @sum_lanes : memref<32xf32, #gpu.address_space<workgroup>>
  memref.store %s_row_t, %sum_partials[%tid_index] : memref<1024xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  scf.if %first_warp {
    %lane_sum = scf.for %t = %tid_index to %threads_index step %c32
        iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %sum_partials[%t] : memref<1024xf32, #gpu.address_space<workgroup>>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %lane_sum, %sum_lanes[%tid_index] : memref<32xf32, #gpu.address_space<workgroup>>
  }
  gpu.barrier
  %row_sum = scf.for %t = %c0 to %c32 step %c4 iter_args(%acc = %zero) -> (f32) {
    %x = vector.load %sum_lanes[%t] : memref<32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %xs = vector.reduction <add>, %x : vector<4xf32> into f32
    %next = arith.addf %acc, %xs : f32
    scf.yield %next : f32
  }

  // Normalize. A resident row's buffer holds exp(x - m_t): out is one
  // multiply by exp(m_t - max) / sum per element.
  %f = arith.divf %scale_t, %row_sum : f32
  %f4 = vector.broadcast %f : f32 to vector<4xf32>
  scf.if %fast {
    scf.for %k = %c0 to %slots step %c1 {
      %k32 = arith.index_cast %k : index to i32
      %slot_col = arith.muli %k32, %slot_step : i32
      %col = arith.addi %lane_col, %slot_col : i32
      %i = arith.addi %row_start, %col : i32
      %e = memref.load %fast_buf[%k] : memref<8xvector<4xf32>>
      %r = arith.mulf %e, %f4 : vector<4xf32>
      kjit.store %r, %out[%i] : vector<4xf32>, !kjit.ptr<f32>, i32
    }
  } else {
    scf.if %resident {
      scf.for %k = %c0 to %slots step %c1 {
        %k32 = arith.index_cast %k : index to i32
        %slot_col = arith.muli %k32, %slot_step : i32
        %col = arith.addi %lane_col, %slot_col : i32
        %i = arith.addi %row_start, %col : i32
        %end = arith.addi %col, %i4 : i32
        %full = arith.cmpi sle, %end, %n_cols : i32
        %e = memref.load %edge_buf[%k] : memref<8xvector<4xf32>>
        %r = arith.mulf %e, %f4 : vector<4xf32>
        scf.if %full {
          kjit.store %r, %out[%i] : vector<4xf32>, !kjit.ptr<f32>, i32
        } else {
          scf.for %j = %c0 to %c4 step %c1 {
            %j32 = arith.index_cast %j : index to i32
            %c = arith.addi %col, %j32 : i32
            %live = arith.cmpi slt, %c, %n_cols : i32
            %ij = arith.addi %row_start, %c : i32
            %x = vector.extract %r[%j] : f32 from vector<4xf32>
            kjit.store %x, %out[%ij] mask %live : f32, !kjit.ptr<f32>, i32
          }
        }
      }
    } else {
      // Second read of a long row: per chunk the loads come before the
      // stores, which may alias them as far as the compiler knows.
      %inv_sum = arith.divf %one, %row_sum : f32
      %inv4 = vector.broadcast %inv_sum : f32 to vector<4xf32>
      %max4 = vector.broadcast %row_max : f32 to vector<4xf32>
      scf.for %chunk_start = %i0 to %n_cols step %chunk : i32 {
        %chunk_col = arith.addi %chunk_start, %lane_col : i32
        %chunk_end = arith.addi %chunk_start, %lane_end : i32
        %chunk_full = arith.cmpi sle, %chunk_end, %n_cols : i32
        scf.if %chunk_full {
          scf.for %k = %c0 to %slots step %c1 {
            %k32 = arith.index_cast %k : index to i32
            %slot_col = arith.muli %k32, %slot_step : i32
            %col = arith.addi %chunk_col, %slot_col : i32
            %i = arith.addi %row_start, %col : i32
            %v = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> vector<4xf32>
            memref.store %v, %long_buf[%k] : memref<8xvector<4xf32>>
          }
          scf.for %k = %c0 to %slots step %c1 {
            %k32 = arith.index_cast %k : index to i32
            %slot_col = arith.muli %k32, %slot_step : i32
            %col = arith.addi %chunk_col, %slot_col : i32
            %i = arith.addi %row_start, %col : i32
            %v = memref.load %long_buf[%k] : memref<8xvector<4xf32>>
            %d = arith.subf %v, %max4 : vector<4xf32>
            %d2 = arith.mulf %d, %log2e4 : vector<4xf32>
            %e = math.exp2 %d2 : vector<4xf32>
            %r = arith.mulf %e, %inv4 : vector<4xf32>
            kjit.store %r, %out[%i] : vector<4xf32>, !kjit.ptr<f32>, i32
          }
        } else {
          // The row's last chunk: every column checked.
          scf.for %k = %c0 to %slots step %c1 {
            %k32 = arith.index_cast %k : index to i32
            %slot_col = arith.muli %k32, %slot_step : i32
            %col = arith.addi %chunk_col, %slot_col : i32
            scf.for %j = %c0 to %c4 step %c1 {
              %j32 = arith.index_cast %j : index to i32
              %c = arith.addi %col, %j32 : i32
              %live = arith.cmpi slt, %c, %n_cols : i32
              %ij = arith.addi %row_start, %c : i32
              %x = kjit.load %in[%ij] mask %live : !kjit.ptr<f32>, i32 -> f32
              %d = arith.subf %x, %row_max : f32
              %d2 = arith.mulf %d, %log2e : f32
              %e = math.exp2 %d2 : f32
              %r = arith.mulf %e, %inv_sum : f32
              kjit.store %r, %out[%ij] mask %live : f32, !kjit.ptr<f32>, i32
            }
          }
        }
      }
    }
  }
  kjit.return
}
