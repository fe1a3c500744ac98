"""Autotuning warm from the fleet: the first call of a tuned key on a
machine whose disk cache is empty but whose Redis store holds the fleet's
records, against the same on the machine that tuned (its disk) and the
cold tuning itself.

    PYTHONPATH=<build or bundle>/python python3 bench/python/autotune_fleet.py \
        --redis redis://127.0.0.1:PORT/0 --key-file KEY --plugin libkjit-redis.so

Runs on the host backend with NumPy arrays (no GPU needed; the fleet's
round trips and HMACs are what is measured): examples/softmax.mlir over 16
configurations (num_warps 1-32 x num_stages 1-3, autotune_bench.py's) for
n_cols 1024 and 4096, 64 rows. Three fresh processes, each timed from the
first call of a key to its return: "cold" (empty disk A, an empty store:
it tunes and publishes), "fleet" (empty disk B, the same store), "disk"
(disk A again). The store should start empty (a fresh redis-server or
database). One JSON line per figure, with the autotune log's counts.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autotune_bench import CONFIGS, autotune_log

KEYS = (1024, 4096)
ROOT = Path(__file__).resolve().parent.parent.parent


def child():
    import numpy as np
    import kjit

    kernel = kjit.load(str(ROOT / "examples" / "softmax.mlir")).softmax
    tuned = kjit.autotune(kernel, key=["n_cols"],
                          configs=[kjit.Config({}, num_warps=w, num_stages=s)
                                   for w, s in CONFIGS])
    for n_cols in KEYS:
        x = np.random.default_rng(0).random((64, n_cols), dtype=np.float32)
        out = np.empty_like(x)
        start = time.perf_counter()
        tuned[(64,)](x, out, n_cols, n_cols)
        ms = (time.perf_counter() - start) * 1e3
        print(json.dumps({"n_cols": n_cols, "first_call_ms": round(ms, 3),
                          "chosen": repr(tuned.best_config)}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--plugin", required=True,
                        help="the Redis store plugin, libkjit-redis.so")
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        return child()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        for name, disk in (("cold", a), ("fleet", b), ("disk", a)):
            env = dict(os.environ, KJIT_CACHE_DIR=disk, KJIT_LOG="autotune",
                       KJIT_PLUGINS=args.plugin, KJIT_REDIS_URL=args.redis,
                       KJIT_REDIS_KEY_FILE=args.key_file)
            done = subprocess.run(
                [sys.executable, __file__, "--child", "--redis", args.redis,
                 "--key-file", args.key_file, "--plugin", args.plugin],
                env=env, capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                print(json.dumps({"phase": name,
                                  "error": done.stderr[-2000:]}))
                continue
            counts = autotune_log(done.stderr)
            for line in done.stdout.splitlines():
                fields = json.loads(line)
                fields.update(counts.get(fields["n_cols"], {}))
                print(json.dumps({"phase": name, **fields}), flush=True)


if __name__ == "__main__":
    main()
