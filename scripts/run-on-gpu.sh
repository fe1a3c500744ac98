#!/usr/bin/env bash
# Runs ON the GPU machine, from the unpacked device bundle (docs/Bundle.md):
#
#   tar xJf .bundle/kjit-bundle.tar.xz -C /tmp && /tmp/kjit-bundle/scripts/run-on-gpu.sh
#
# Steps, each logged, none stopping the others (the exit status is 1 if any
# failed, 0 if all passed):
#   1. nvidia-smi and the machine;
#   2. the cuda backend's own smoke test (kjit-cuda-smoke, when bundled),
#      and each finalizer on a good and a broken PTX (kjit-cuda-driver);
#      every example of scripts/examples.sh (the main job's launches) with
#      kjit-run --backend cuda, checked against the plain-Python references
#      of scripts/reference.py, then the same examples under
#      compute-sanitizer (memcheck, racecheck; skipped without it), then
#      the backend conformance suite
#      kjit-backend-conformance --backend=cuda; then the same
#      on --backend host;
#   3. launch cost, ABAB rounds of separate processes: raw cuLaunchKernel
#      (kjit-raw-launch), kjit's dispatch (kjit-gpu-dispatch, which also
#      times the bare driver in its own process, round by round), Triton's
#      dispatch anchor (anchors/triton_anchor.py), and the nvcc-built
#      anchors/cuda_raw.cu when nvcc exists;
#   4. bandwidth, ABAB: kjit vector add n = 2^28 and softmax on 3 shapes
#      (kjit-gpu-bench bandwidth) against anchors/triton_softmax.py;
#   5. first launch, CUDA_CACHE_DISABLE=1, empty caches: kjit-gpu-bench
#      first-launch and Triton's triton_compile_later.py (cold), ABAB in
#      fresh processes, 10 rounds; triton_compile.py cold then warm, and
#      triton_compile_later.py warm;
#   6. the host-side dispatch floor (kjit-bench-dispatch, null backend).
#
# Results go to "${OUT:-./gpu-out}": summary.txt (one line per step, the
# figures), results.jsonl (every JSON line any step printed, tagged with its
# step), log.txt (every step's full output), nvidia-smi.txt,
# first-launch-trace.json (the trace plugin's Perfetto file of one
# first-launch process) and plot.svg (scripts/plot-gpu-results.py): six
# files, within what the device tool brings back. The summary is printed
# last.
#
#   --host-only      steps 2 (host backend only) and a short dispatch run:
#                    what scripts/verify-bundle.sh runs on a machine
#                    without a GPU
#   --quick          fewer rounds everywhere (a smoke test)
#   --matmul         the matrix units' steps alone: the matmul examples
#                    (examples/matmul_bf16.mlir, matmul_fp16.mlir) on cuda
#                    against the plain-Python reference, under
#                    compute-sanitizer memcheck and racecheck, and
#                    bench/python/matmul_bench.py (kjit at num_stages 3 and
#                    4 against the Triton anchor and torch.matmul, TFLOP/s,
#                    every result checked against an fp32 product)
#   --python         the Python package's steps alone: its GPU suite
#                    (test/python/on_cuda.py), the Python examples, and
#                    bench/python/launch_bench.py (launch cost, torch.compile,
#                    CUDA graphs, start-up and bandwidth from Python)
#
# Environment: KJIT_ANCHORS (the anchors' folder; default ./.anchors when
# it exists, else the bundle's anchors/), KJIT_GPU_DEADLINE_S (default 480:
# steps that would start later are skipped and count as failed),
# KJIT_GPU_HARD_LIMIT_S (default 540: no step runs past it),
# KJIT_STEP_TIMEOUT_S (default 150 per step).
set -uo pipefail

B=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT_DIR=${OUT:-./gpu-out}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
mode=full
quick=0
for a in "$@"; do
  case "$a" in
    --host-only) mode=host ;;
    --quick) quick=1 ;;
    --python) mode=python ;;
    --matmul) mode=matmul ;;
    *) echo "usage: $0 [--host-only] [--quick] [--python | --matmul]" >&2; exit 2 ;;
  esac
done

summary=$OUT_DIR/summary.txt
results=$OUT_DIR/results.jsonl
log=$OUT_DIR/log.txt
: > "$summary"; : > "$results"; : > "$log"
work=$(mktemp -d /tmp/kjit-gpu-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
# No step starts after $deadline s, and none runs past $hard_limit s (the
# device tool's limit is 600 s a command, the unpacking included).
deadline=${KJIT_GPU_DEADLINE_S:-480}
hard_limit=${KJIT_GPU_HARD_LIMIT_S:-540}
step_timeout=${KJIT_STEP_TIMEOUT_S:-150}
start=$(date +%s)
failed=0
passed=0

if [ -n "${KJIT_ANCHORS:-}" ]; then
  anchors=$KJIT_ANCHORS
elif [ -d ./.anchors ]; then
  anchors=$(cd ./.anchors && pwd)
else
  anchors=$B/anchors
fi
# kjit finds its compiler and backends beside lib/libkjit-runtime.so; an
# outer setting must not send it elsewhere.
unset KJIT_COMPILER_LIBRARY KJIT_PLUGINS KJIT_INTERPRET
# The first-launch steps measure compiles: no disk cache (a warm start is
# bench/disk-cache/warm-start.py's, scripts/warm-start.py in the bundle).
export KJIT_CACHE_DIR=
# The CUDA toolkit (ptxas, libdevice, nvJitLink) where the GPU machine has it.
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -d "$CUDA_HOME/bin" ] && export PATH="$PATH:$CUDA_HOME/bin"
export PYTHONUNBUFFERED=1

note() { echo "$*" | tee -a "$summary"; }

# step NAME COMMAND...: runs COMMAND with a timeout, its output into log.txt
# (and the console), its JSON lines into results.jsonl; records pass/fail.
# Every JSON object a step printed (one per line, as kjit's benches print,
# or spread over lines, as Triton's anchors print), each as one
# {"step": NAME, "result": OBJECT} line.
collect_json() { # NAME < OUTPUT
  python3 -c '
import json, sys
name, text = sys.argv[1], sys.stdin.read()
decoder, i = json.JSONDecoder(), 0
while True:
    i = text.find("{", i)
    if i < 0:
        break
    # Only objects that start a line: a brace inside a message is no result.
    if i and text[i - 1] != "\n":
        i += 1
        continue
    try:
        value, end = decoder.raw_decode(text, i)
    except ValueError:
        i += 1
        continue
    print(json.dumps({"step": name, "result": value}))
    i = end
' "$1"
}

step() {
  local name=$1
  shift
  local now elapsed rc t0 t1
  now=$(date +%s)
  elapsed=$((now - start))
  if [ "$elapsed" -ge "$deadline" ]; then
    note "SKIP  $name (deadline: ${elapsed}s >= ${deadline}s)"
    failed=$((failed + 1))
    return 1
  fi
  local limit=$step_timeout
  [ $((hard_limit - elapsed)) -lt "$limit" ] && limit=$((hard_limit - elapsed))
  echo "=== $name: $*" >> "$log"
  t0=$(date +%s.%N)
  if [ "$(type -t "$1")" = function ]; then
    # timeout runs programs only: a function runs in a child bash.
    timeout --kill-after=5 "$limit" bash -c '"$@"' bash "$@" \
      > "$work/step.out" 2>&1
  else
    timeout --kill-after=5 "$limit" "$@" > "$work/step.out" 2>&1
  fi
  rc=$?
  t1=$(date +%s.%N)
  cat "$work/step.out" >> "$log"
  collect_json "$name" < "$work/step.out" >> "$results"
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    note "PASS  $name (${secs}s)"
  else
    failed=$((failed + 1))
    note "FAIL  $name (rc $rc, ${secs}s; log.txt has its output)"
    tail -5 "$work/step.out" | sed 's/^/      /' | tee -a "$summary"
  fi
  return $rc
}

# kjit-run with the trace plugin: 200 launches of the vector add, the
# summary's device column, one device slice per launch in the trace.
device_times() { # BACKEND
  local json="$work/trace-$1.json"
  KJIT_PLUGINS="$B/lib/libkjit-trace.so" KJIT_TRACE_FILE="$json" \
    "$B/bin/kjit-run" "$B/examples/vector_add.mlir" --kernel add \
    --backend "$1" --grid 4 --arg x=f32[4096]:arange --arg y=f32[4096]:ones \
    --arg out=f32[4096]:zeros --arg n=4096 --repeat 200 2>&1 | tail -4
  python3 - "$json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))
device = [e for e in events if e.get("cat") == "device"]
launches = [e for e in events if e.get("cat") == "launch"]
# A device slice starts after its launch call began (the kernel cannot run
# before it is enqueued): the clock mapping's sanity check.
start = {e["args"]["correlation_id"]: e["ts"] for e in launches}
early = sum(1 for e in device if e["ts"] < start.get(e["args"]["correlation_id"], 0) - 2)
durs = sorted(e.get("dur", 0) for e in device)
print(json.dumps({"bench": "device_times", "launches": len(launches),
                  "device_slices": len(device), "starts_before_launch": early,
                  "median_device_us": durs[len(durs) // 2] if durs else None}))
sys.exit(0 if launches and len(device) == len(launches) and not early else 1)
PY
}

# One example: kjit-run on BACKEND, then the reference check.
example() { # BACKEND NAME FILE KERNEL PARAMS ARGS...
  local backend=$1 name=$2 file=$3 kernel=$4 params=$5
  shift 5
  local dir="$work/examples/$backend/${name// /_}"
  mkdir -p "$dir"
  "$B/bin/kjit-run" "$B/examples/$file" --kernel "$kernel" \
    --backend "$backend" --output-dir "$dir" "$@" || return 1
  # shellcheck disable=SC2086
  python3 "$B/scripts/reference.py" "$kernel" "$dir" $params
}
# One finalizer: the example kernel finalizes, the broken one fails with
# the finalizer's log (test/CudaBackend/gpu.test checks the same with lit).
finalizer_check() { # FINALIZER
  local out
  out=$(KJIT_CUDA_FINALIZER=$1 KJIT_CUDA_VERBOSE=1 "$B/bin/kjit-cuda-driver" \
    --plugin="$B/lib/libkjit-cuda.so" \
    finalize:ptx:"$B/share/kjit/kernels.ptx":add \
    finalize:ptx:"$B/share/kjit/bad-syntax.ptx":broken 2>&1)
  echo "$out"
  echo "$out" | grep -q '^finalize ok: [0-9]* bytes$' &&
    echo "$out" | grep -q "finalize error: .*finalize of kernel 'broken'.*failed" &&
    echo "$out" | grep -qi 'syntax error'
}
export -f example device_times finalizer_check
export B work
example_step() { # NAME FILE KERNEL PARAMS ARGS... (backend from $backend)
  local name=$1
  step "example $backend: $name" example "$backend" "$@"
}
# shellcheck source=examples.sh
source "$B/scripts/examples.sh"

# The examples under compute-sanitizer: every example of scripts/examples.sh
# through kjit-run --backend cuda, under memcheck and then racecheck, with
# every CUDA API call that returns an error reported (kjit makes none on a
# correct run: docs/CudaBackend.md, "Parameters and failing calls"); any
# report fails the step (--error-exitcode). The examples are small, so each
# tool's pass takes seconds. Skipped, with a note, where the machine has no
# compute-sanitizer.
sanitized_example() { # NAME FILE KERNEL PARAMS ARGS... (tool from $tool)
  local name=$1 file=$2 kernel=$3
  shift 4
  echo "--- $tool: $name"
  if "$sanitizer" --tool "$tool" --report-api-errors all --error-exitcode 97 \
    "$B/bin/kjit-run" "$B/examples/$file" --kernel "$kernel" \
    --backend cuda "$@"; then
    echo "--- $tool: $name: clean"
  else
    echo "--- $tool: $name: FAILED (exit status $?)"
    return 1
  fi
}
sanitized_examples() { # TOOL [KERNEL-PREFIX]
  local tool=$1 failures=0
  export only=${2:-}
  # shellcheck source=examples.sh
  source "$B/scripts/examples.sh"
  kjit_for_each_example sanitized_example_of_kind || failures=$?
  echo "$tool: $failures examples failed"
  [ "$failures" -eq 0 ]
}
# sanitized_example for the kernels whose names start with $only.
sanitized_example_of_kind() { # NAME FILE KERNEL PARAMS ARGS...
  [[ $3 == "$only"* ]] || return 0
  sanitized_example "$@"
}
sanitizer_steps() { # [KERNEL-PREFIX]
  sanitizer=$(command -v compute-sanitizer ||
    ls "$CUDA_HOME/bin/compute-sanitizer" \
      "$CUDA_HOME/compute-sanitizer/compute-sanitizer" 2>/dev/null | head -1)
  if [ -z "$sanitizer" ]; then
    note "SKIP  compute-sanitizer: not on PATH nor in $CUDA_HOME"
    return
  fi
  export sanitizer
  for tool in memcheck racecheck; do
    step "compute-sanitizer $tool: ${1:-all} examples on cuda" \
      sanitized_examples "$tool" "${1:-}"
  done
}
export -f sanitized_example sanitized_examples sanitized_example_of_kind

note "kjit device run: $(date -u +%Y-%m-%dT%H:%M:%SZ), bundle $B"
[ -f "$B/MANIFEST" ] && note "$(sed -n 's/^commit: /bundle commit: /p' "$B/MANIFEST")"
note "anchors: $anchors"

# 1. The machine.
{
  uname -a
  (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
  ldd --version 2>&1 | head -1
  nproc
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1
  command -v nvcc ptxas 2>&1 || ls /usr/local/cuda/bin 2>&1 | head -20
} > "$OUT_DIR/nvidia-smi.txt" 2>&1
head -25 "$OUT_DIR/nvidia-smi.txt"

# The Python package (python/ of the bundle): its GPU suite and examples;
# with --python also its benchmarks, and nothing else.
python_steps() {
  if [ ! -d "$B/python/kjit" ]; then
    note "FAIL  python: the bundle has no python/kjit (no python3-dev in the build)"
    failed=$((failed + 1))
    return
  fi
  step "python suite cuda" env PYTHONPATH="$B/python" KJIT_CACHE_DIR="$work/pycache" \
    python3 "$B/test/python/on_cuda.py" "$B/examples"
  for example in "$B"/examples/python/*.py; do
    [ -f "$example" ] || continue
    step "python example $(basename "$example")" env PYTHONPATH="$B/python" \
      KJIT_CACHE_DIR="$work/pycache" python3 "$example"
  done
}
if [ $mode = python ]; then
  python_steps
  if [ -f "$B/bench/python/launch_bench.py" ]; then
    bench_flags=()
    [ $quick -eq 1 ] && bench_flags=(--quick)
    step "python launch bench" env PYTHONPATH="$B/python" \
      KJIT_CACHE_DIR="$work/pycache-bench" TRITON_CACHE_DIR="$work/tcache-python" \
      python3 "$B/bench/python/launch_bench.py" "${bench_flags[@]}"
  fi
  note "python: $passed passed, $failed failed"
  exit $((failed > 0))
fi

if [ $mode = matmul ]; then
  backend=cuda
  matmul_example() { [[ $3 == matmul_* ]] && example_step "$@"; return 0; }
  kjit_for_each_example matmul_example
  sanitizer_steps matmul_
  # CUDA_CACHE_DISABLE: the first launches it reports compile from scratch
  # (nvJitLink otherwise keeps the PTX of earlier runs on the machine).
  step "matmul bench" env PYTHONPATH="$B/python" CUDA_CACHE_DISABLE=1 \
    KJIT_CACHE_DIR="$work/matmul-cache" TRITON_CACHE_DIR="$work/tcache-matmul" \
    python3 "$B/bench/python/matmul_bench.py" --anchors "$anchors" \
    --rounds 5 --num-stages 3,4
  note "matmul: $passed passed, $failed failed"
  exit $((failed > 0))
fi

# 2. The examples.
backends=(cuda host)
[ $mode = host ] && backends=(host)
for backend in "${backends[@]}"; do
  if [ "$backend" = cuda ] && [ ! -f "$B/lib/libkjit-cuda.so" ]; then
    note "FAIL  examples on cuda: the bundle has no lib/libkjit-cuda.so" \
         "(plugins/cuda was not in the build)"
    failed=$((failed + 1))
    continue
  fi
  # The cuda backend alone, over the bare ABI (when the bundle has it).
  if [ "$backend" = cuda ] && [ -x "$B/bin/kjit-cuda-smoke" ]; then
    step "cuda backend smoke" "$B/bin/kjit-cuda-smoke" \
      "$B/lib/libkjit-cuda.so" "$B/share/kjit/cuda-smoke-kernels.ptx" 100000
  fi
  # Each finalizer on the real toolkit and driver: a kernel becomes a
  # cubin, and a PTX syntax error is reported with the finalizer's log.
  if [ "$backend" = cuda ] && [ -x "$B/bin/kjit-cuda-driver" ]; then
    for f in driver ptxas nvjitlink; do
      step "cuda finalizer $f" finalizer_check "$f"
    done
  fi
  kjit_for_each_example example_step
  [ "$backend" = cuda ] && sanitizer_steps
  # The runtime's tests (specialization, the global check, hooks through the
  # trace plugin, warmup/preload, single flight, empty grids, a device
  # assert failing under debug and the launch after it) on this
  # backend, every buffer in its device memory (kjit-backend-conformance,
  # its kernels compiled in).
  if [ -x "$B/bin/kjit-backend-conformance" ]; then
    step "runtime tests $backend" \
      "$B/bin/kjit-backend-conformance" --backend="$backend"
  else
    note "FAIL  runtime tests $backend: the bundle has no" \
         "bin/kjit-backend-conformance (the build had no GoogleTest)"
    failed=$((failed + 1))
  fi
  [ "$backend" = cuda ] && python_steps
  # Device times through the runtime: the trace plugin's launch_complete
  # hook makes every launch timed; each launch gets one device slice.
  step "device times $backend" device_times "$backend"
done

rounds=3
[ $quick -eq 1 ] && rounds=1
if [ $mode = host ]; then
  step "kjit dispatch host" "$B/bin/kjit-gpu-dispatch" --backend host \
    --iters 2000 --rounds 3
  step "kjit first launch host" "$B/bin/kjit-gpu-bench" first-launch \
    --backend host
else
  # 3. Launch cost, ABAB over processes.
  iters=20000
  [ $quick -eq 1 ] && iters=2000
  have_nvcc=0
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if [ -x "$nvcc" ] && [ -f "$anchors/cuda_raw.cu" ]; then
    step "build cuda_raw.cu" "$nvcc" -O2 -o "$work/cuda_raw" \
      "$anchors/cuda_raw.cu" -lcuda && have_nvcc=1
  fi
  for r in $(seq 1 $rounds); do
    step "raw launch #$r" "$B/bin/kjit-raw-launch" --module \
      "$B/share/kjit/empty.ptx" --iters $iters --rounds 11
    # 21 rounds: single rounds of the ratio spread by +-10% on these
    # machines, and the target (1.05x) is a median.
    step "kjit dispatch cuda #$r" "$B/bin/kjit-gpu-dispatch" --backend cuda \
      --raw-module "$B/share/kjit/empty.ptx" \
      --iters $((iters / 2)) --rounds 21
    # Arguments that change at every launch (three sets in turn): every
    # launch binds in full, none finds the last one's inputs again.
    step "kjit dispatch cuda varying #$r" "$B/bin/kjit-gpu-dispatch" \
      --backend cuda --vary --raw-module "$B/share/kjit/empty.ptx" \
      --iters $((iters / 2)) --rounds 21
    # The same with 4 warps (Triton's default block, 128 threads).
    step "kjit dispatch cuda 4 warps #$r" "$B/bin/kjit-gpu-dispatch" \
      --backend cuda --num-warps 4 --raw-module "$B/share/kjit/empty.ptx" \
      --iters $((iters / 2)) --rounds 21
    [ $have_nvcc -eq 1 ] && step "anchor cuda_raw #$r" "$work/cuda_raw"
    step "anchor triton dispatch #$r" \
      env TRITON_CACHE_DIR=$work/tcache-dispatch python3 "$anchors/triton_anchor.py"
  done

  # 4. Bandwidth, ABAB.
  bw_rounds=2
  [ $quick -eq 1 ] && bw_rounds=1
  for r in $(seq 1 $bw_rounds); do
    step "kjit bandwidth #$r" "$B/bin/kjit-gpu-bench" bandwidth \
      --backend cuda --reps 20 --rounds 5
    step "anchor triton softmax #$r" \
      env TRITON_CACHE_DIR=$work/tcache-softmax python3 "$anchors/triton_softmax.py"
  done

  # 5. First launch, empty caches, CUDA's cache off.
  export CUDA_CACHE_DISABLE=1
  # kjit and Triton's later kernels, ABAB: each round one kjit process
  # (its first kernel, then later ones) and one Triton process with an
  # empty cache (triton_compile_later.py: its first kernel, then three
  # later ones). Processes differ by up to a third on these machines, so
  # the comparison is of medians over the rounds (the summary's
  # "later kernels" line).
  fl_rounds=10
  [ $quick -eq 1 ] && fl_rounds=1
  for r in $(seq 1 $fl_rounds); do
    step "kjit first launch cuda #$r" "$B/bin/kjit-gpu-bench" first-launch \
      --backend cuda
    rm -rf "$work/tcache-later"
    step "anchor triton later kernels cold #$r" \
      env TRITON_CACHE_DIR=$work/tcache-later python3 "$anchors/triton_compile_later.py" cold
  done
  # Where a first launch's time goes: the trace's compile ms per kernel
  # and the backend's finalize log (which finalizer, ms each).
  step "kjit first launch cuda breakdown" \
    env KJIT_CUDA_VERBOSE=1 KJIT_PLUGINS="$B/lib/libkjit-trace.so" \
    KJIT_TRACE_FILE="$OUT_DIR/first-launch-trace.json" \
    "$B/bin/kjit-gpu-bench" first-launch --backend cuda
  rm -rf "$work/tcache-first"
  step "anchor triton first launch cold" \
    env TRITON_CACHE_DIR=$work/tcache-first python3 "$anchors/triton_compile.py" cold
  step "anchor triton first launch warm" \
    env TRITON_CACHE_DIR=$work/tcache-first python3 "$anchors/triton_compile.py" warm
  step "anchor triton later kernels warm" \
    env TRITON_CACHE_DIR=$work/tcache-later python3 "$anchors/triton_compile_later.py" warm
  unset CUDA_CACHE_DISABLE

  # 6. The host-side floor of a launch (null backend).
  step "kjit dispatch null backend" \
    env KJIT_BENCH_NULL_BACKEND="$B/lib/libkjit-bench-null-backend.so" \
    "$B/bin/kjit-bench-dispatch" \
    --benchmark_min_time=0.2 --benchmark_format=console
fi

# The figures, one line each, in the summary.
{
  echo
  echo "figures (median [min, max] where rounds; results.jsonl has all):"
  python3 - "$results" <<'PY' 2>&1 || true
import json, sys
for line in open(sys.argv[1]):
    try:
        rec = json.loads(line)
    except ValueError:
        continue
    step, r = rec["step"], rec["result"]
    if not isinstance(r, dict):
        continue
    items = []
    for k, v in r.items():
        if k in ("step",) or isinstance(v, (dict, list)):
            continue
        items.append(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}")
    print(f"  [{step}] " + ", ".join(items))
PY
  # The run's plot (bench/results/figures has the ones the docs show), and the
  # later kernels' line: kjit's (saxpy and the vector adds of other
  # BLOCKs) against Triton's (kernels 1-3), over the ABAB rounds of step 5.
  python3 "$B/scripts/plot-gpu-results.py" "$results" "$OUT_DIR/plot.svg" \
    "kjit and Triton on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%d)" \
    || echo "FAIL  plot: scripts/plot-gpu-results.py failed"
} >> "$summary"

elapsed=$(( $(date +%s) - start ))
note ""
note "steps: $passed passed, $failed failed, ${elapsed}s"
echo "results in $OUT_DIR: summary.txt results.jsonl log.txt nvidia-smi.txt" \
  "first-launch-trace.json plot.svg"
echo "----- summary.txt -----"
cat "$summary"
[ $failed -eq 0 ]
