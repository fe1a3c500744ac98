// Empty kernels for launch_bench.py: the launch path alone, with nothing for
// the GPU to do. e1 and e8 take the parameters of empty.ptx's kernels of the
// same names (bench/gpu/empty.ptx): one pointer, and four pointers plus four
// 32-bit integers, so that the raw floor, kjit and Triton launch the same
// argument lists.

kjit.kernel @e1(%p: !kjit.ptr<f32>) {
  kjit.return
}

kjit.kernel @e8(%a: !kjit.ptr<f32>, %b: !kjit.ptr<f32>, %c: !kjit.ptr<f32>,
                %d: !kjit.ptr<f32>, %n0: i32, %n1: i32, %n2: i32, %n3: i32) {
  kjit.return
}
