// A kjit operation in an llvm.func: rejected, not lowered (for host-to-llvm.test).
llvm.func @f() {
  %p = kjit.program_id x
  llvm.return
}
