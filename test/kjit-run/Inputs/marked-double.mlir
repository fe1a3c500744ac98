// out = x + x, with an op of the test plugin's `count` dialect in the body:
// it parses only with the dialect plugin loaded, and lowers only once
// erase-count-ops removed it (test/kjit-run/pass-plugin.test).
kjit.kernel @double(%x: !kjit.ptr<f32> {kjit.const}, %out: !kjit.ptr<f32>,
                    %n: i32) {
  "count.marker"() : () -> ()
  %tid_index = gpu.thread_id x
  %tid = arith.index_cast %tid_index : index to i32
  %in_bounds = arith.cmpi slt, %tid, %n : i32
  %a = kjit.load %x[%tid] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
  %sum = arith.addf %a, %a : f32
  kjit.store %sum, %out[%tid] mask %in_bounds : f32, !kjit.ptr<f32>, i32
  kjit.return
}
