#!/usr/bin/env bash
# One device call's worth of GPU checks and timings (the device tool's `run`, which brings back at
# most 8 files): install the carried wheels, then the coaching tasks' timings against the
# libraries (bench/kernels.py), sweeps of the memory-bound experts' constants (bench/expert_sweep.py)
# and the walkthroughs' steps (bench/walkthrough.py),
# every expert's `verify --backend gpu`, and the gpu-marked tests. kernels.txt, sweeps.txt, verify.txt
# and gpu-tests.txt are written to $OUT as each step ends (a call cut short keeps what finished); the
# JSON files go to $OUT/all/, packed into $OUT/all.tgz at the end.
# Usage on the device: bash bench/gpu_session.sh [kernels] [walk] [sweep] [verify] [tests]; each step is
# bounded so that "kernels walk", "sweep" and "verify tests" each fit one 600 s call
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
OUT=${OUT:-/tmp/out}; LOG=$OUT/all; mkdir -p "$LOG"
steps=${*:-kernels walk verify tests}
# device time is scarce and each call costs a start: a call goes on with the candidates and the
# constant sweeps for as long as its time lasts (each sub-run starts only if it can finish)
case " $steps " in *" sweep "*) ;; *) steps="$steps sweep" ;; esac
# no card has yet timed the experts against the libraries: that comes first in any call
case " $steps " in *" kernels "*) ;; *) steps="kernels $steps" ;; esac
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$LOG/gpu.txt" 2>&1
# which kernel files this call timed (the results name no commit: the device gets a copy of the tree)
md5sum kernels/*/expert.py kernels/*/steps/*.py bench/variants/*/*.py > "$OUT/files.md5" 2>/dev/null
# a sub-run starts only while the call has time left for it (the device tool stops a call at 600 s)
left() { [ $((SECONDS + $1)) -lt ${BUDGET:-570} ] || { echo "skipped (needs $1 s, $SECONDS s used): $2"; false; }; }
for step in $steps; do
  case $step in
    kernels) left 200 kernels || continue
             timeout 300 python3 bench/kernels.py --runs 20 --json "$LOG/kernels.json" > "$LOG/kernels.txt" 2>&1
             echo "kernels rc=$?" >> "$LOG/kernels.txt"; cp "$LOG/kernels.txt" "$LOG/kernels.json" "$OUT/" 2>/dev/null ;;
    walk)
      left 120 walk || continue
      timeout 240 python3 bench/walkthrough.py > "$LOG/walk.txt" 2>&1; echo "walk rc=$?" >> "$LOG/walk.txt"
      tar -czf "$OUT/walkthrough-times.tgz" kernels/*/walkthrough-times.json 2>> "$LOG/walk.txt"; cp "$LOG/walk.txt" "$OUT/" ;;
    sweep)
      [ -f "$LOG/sweeps.txt" ] || : > "$LOG/sweeps.txt"
      # the candidates first (each one a whole kernel file, timed against the expert as it is),
      # then the sweeps of constants, while time is left
      for f in bench/variants/*/*.py; do
        [ -f "$f" ] || continue; t=$(basename "$(dirname "$f")"); left 60 "$f" >> "$LOG/sweeps.txt" || continue
        # a candidate may name the shapes it is for (a line "# sweep-shapes: 1025,333,771 127,255,63")
        shapes=$(sed -n 's/^# sweep-shapes: //p' "$f")
        for sh in ${shapes:-largest}; do
          [ "$sh" = largest ] && arg=() || arg=(--shape "$sh")
          timeout 60 python3 bench/expert_sweep.py "$t" --file "$f" "${arg[@]}" >> "$LOG/sweeps.txt" 2>&1
        done
        cp "$LOG/sweeps.txt" "$OUT/"
      done
      for t in softmax layernorm; do left 90 "sweep $t" || continue
        timeout 90 python3 bench/expert_sweep.py $t --set ITEMS=4,8,16,32 --set MAX_TPB=256,512,1024 --json "$LOG/sweep-$t.json" 2>&1
      done >> "$LOG/sweeps.txt"
      left 120 "sweep reduce_sum" >> "$LOG/sweeps.txt" && timeout 120 python3 bench/expert_sweep.py reduce_sum --set TPB=256,512,1024 --set UNROLL=8,16 --set BLOCKS_PER_SM=2,4,8 \
          --json "$LOG/sweep-reduce_sum.json" >> "$LOG/sweeps.txt" 2>&1
      for t in attention attention_document; do left 100 "sweep VC $t" >> "$LOG/sweeps.txt" || continue
        timeout 100 python3 bench/expert_sweep.py $t --set VC=16,64 --runs 10 >> "$LOG/sweeps.txt" 2>&1
      done
      cp "$LOG/sweeps.txt" "$OUT/" ;;
    verify)
      for t in kernels/*/; do t=$(basename "$t"); [ -f "kernels/$t/expert.py" ] || continue; left 90 "verify $t" >> "$OUT/verify.txt" || continue
        timeout 90 python3 -m tutor.cli verify "$t" "kernels/$t/expert.py" --backend gpu --json > "$LOG/verify-$t.json" 2>>"$LOG/verify.err"
        echo "verify $t rc=$? $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('passed' if d.get('passed') else 'FAILED', [f.get('kind') for f in d.get('failures', [])][:4])" "$LOG/verify-$t.json" 2>&1 | tail -1)" >> "$OUT/verify.txt"
      done ;;
    tests) left 100 tests || continue
           timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -n 0 > "$LOG/gpu-tests.txt" 2>&1
           echo "tests rc=$?" >> "$LOG/gpu-tests.txt"; cp "$LOG/gpu-tests.txt" "$OUT/" ;;
  esac
done
tar -czf "$OUT/all.tgz" -C "$OUT" all && rm -rf "$LOG"
ls -la "$OUT"
