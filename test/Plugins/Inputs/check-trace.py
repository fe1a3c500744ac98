#!/usr/bin/env python3
"""Parses a trace written by the trace plugin and prints its events one per
line, without timestamps or thread ids (those vary), for FileCheck. Fails
when the file is not valid Chrome trace-event JSON. With --nesting, prints
instead whether each device slice lies inside the host-side launch slice of
its correlation id (true of a synchronous backend such as the host); with
--after-enqueue, whether each starts after its launch call began (true of
every backend)."""
import json
import sys

events = json.load(open(sys.argv[-1]))
assert isinstance(events, list), "the array form of the trace format"


def each_device_slice(judge, yes, no):
    """Prints, for each device slice, `yes` or `no` as judge(slice, host
    launch slice of its correlation id) says; then exits."""
    launches = {e["args"]["correlation_id"]: e for e in events
                if e.get("cat") == "launch"}
    for e in events:
        if e.get("cat") != "device":
            continue
        host = launches[e["args"]["correlation_id"]]
        print("device slice %d %s" % (e["args"]["correlation_id"],
                                      yes if judge(e, host) else no))
    sys.exit(0)


# Timestamps are printed in microseconds with 3 decimals.
if "--after-enqueue" in sys.argv:
    # An asynchronous backend's kernel starts after the launch call that
    # enqueued it began, whatever the clock mapping's error (it may only
    # make the device slice later).
    each_device_slice(lambda e, host: e["ts"] >= host["ts"] - 0.001 and
                      e["dur"] >= 0, "after its enqueue", "EARLY")
if "--nesting" in sys.argv:
    each_device_slice(lambda e, host: e["ts"] >= host["ts"] - 0.001 and
                      e["ts"] + e["dur"] <= host["ts"] + host["dur"] + 0.002,
                      "inside", "OUTSIDE")
for e in events:
    for field in ("name", "ph", "pid"):
        assert field in e, "event without %s: %r" % (field, e)
    if e["ph"] == "X":
        assert e["dur"] >= 0 and e["ts"] >= 0, e
        assert isinstance(e["tid"], int), e
    args = " ".join("%s=%s" % (k, json.dumps(v, sort_keys=True))
                    for k, v in sorted(e.get("args", {}).items()))
    print("%s %s %s %s" % (e["ph"], e.get("cat", "-"), e["name"], args))
