kjit.kernel @k() {
  kjit.launch
  kjit.return
}
