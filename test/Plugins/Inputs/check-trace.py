#!/usr/bin/env python3
"""Parses a trace written by the trace plugin and prints its events one per
line, without timestamps or thread ids (those vary), for FileCheck. Fails
when the file is not valid Chrome trace-event JSON."""
import json
import sys

events = json.load(open(sys.argv[1]))
assert isinstance(events, list), "the array form of the trace format"
for e in events:
    for field in ("name", "ph", "pid"):
        assert field in e, "event without %s: %r" % (field, e)
    if e["ph"] == "X":
        assert e["dur"] >= 0 and e["ts"] >= 0, e
        assert isinstance(e["tid"], int), e
    args = " ".join("%s=%s" % (k, json.dumps(v, sort_keys=True))
                    for k, v in sorted(e.get("args", {}).items()))
    print("%s %s %s %s" % (e["ph"], e.get("cat", "-"), e["name"], args))
