kjit.kernel @k(%n: i32) {
  kjit.return
}
