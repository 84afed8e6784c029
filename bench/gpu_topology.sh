#!/usr/bin/env bash
# A full-depth model as tensor-parallel replicas on a lent host with 4 GPUs, at full length where a lease
# allows (shortened and labelled so where not, below): a dummy-weight checkpoint in the precision the published
# systems ran (`data dummy-model --precision published`), synthetic data with the data set's length profile,
# and one `submitter run-all` of the Offline scenario's audit and performance run on one engine start.
# Descriptor: bench/systems/gpu_multi_dummy.json.
#
#   benchmark        topology        round  audit   QPS default: samples issued (equal-issue mode)
#   llama2-70b-99.9  2 x TP=2        v6.1   TEST06  37: 24,576 (one set), VALID below ~41 samples/s
#   mixtral-8x7b     2 x TP=2        v6.0   TEST06  80: 60,000 (four sets of 15,000), VALID below ~100 samples/s
#   gpt-oss-120b     2 x TP=2        v6.1   none    9.6: 6,396 (one set; 9.7 asks two), VALID below ~10.7 samples/s
#   whisper          4 x TP=1        v6.1   none    230: 151,869 (93 sets of 1,633), VALID below ~253 samples/s
#   qwen3-vl-235b-a22b  TP=4, 94 layers  v6.1  none  shortened: one pass over SAMPLES (default 4,800) records
#   llama3.1-405b    TP=4            v6.0   none    shortened: one pass over SAMPLES (default 160) records;
#                                                   all 126 layers fit four H200s, LAYERS=80 on four H100s
#
# REPLICAS=N runs N replicas instead of the table's count, on a host with fewer GPUs: give it QPS or BASELINE
# too, since the table's rates are for the table's replicas. On two H100s: whisper as 2 x TP=1 (BASELINE=14
# REPLICAS=2); mixtral-8x7b as one TP=2 group (REPLICAS=1 QPS=50: three sets of 15,000, VALID up to 75
# samples/s; it did 43.4 on two H100s, 17 minutes; QPS=40 asks two sets, INVALID above 50; planned at 21.9 GiB
# of FP8 weights and 511 sequences of 3,072 tokens per GPU); one H100 alone made 4,364 tokens/s in a profiled
# 2,000-sample pass, so the group ran at 0.72 or less of two times one: next, REPLICAS=2 TP=1 QPS=60 (three sets,
# VALID up to 75 samples/s). gpt-oss-120b as 2 x TP=1 on two H100s had not finished its 6,396 samples after
# 22.5 minutes (the eleventh lease in bench/RESULTS.md), about 11 of them lost to Triton compiles (below), and
# 8.6 GiB of KV cache a GPU holds only about 78 of its 6,300-token sequences. As TP=2 a group holds 229
# sequences of 20,480 tokens: the table's 2 x TP=2 on four H100s made 9.23 samples/s, VALID in 693 s (QPS=9.6,
# STOP_AFTER=1380; the fourteenth lease).
# gpt-oss-120b's token budget is 1,024 a step, the largest CUDA graph vLLM captures for it: in vLLM 0.26 the
# Triton MoE's routing kernels (vLLM's bundled triton_kernels) compile once for every 32 tokens of a step's
# size, so a step larger than the largest graph, which runs with its own size, compiles at run time (77-81 %
# of the engines' samples in a profile 60-80 s into the eleventh lease's run, the GPUs mostly idle for its first
# 11 minutes; triton-lang/triton#10872, fixed by #10875 in July 2026, not in vLLM 0.26's v3.5.1 copy). Within
# 1,024 every step is padded to a captured size, whose kernels compile while the graphs are captured.
# TP=N (with REPLICAS) makes each replica a group of N GPUs instead of the table's: TP=1 REPLICAS=1 is the
# one-GPU figure a group's scaling is measured against, on a one-GPU lease where the model fits one GPU.
# SCENARIO=Server QPS=RATE runs the Server scenario instead, where the descriptor sets it up (llama2-70b-99.9,
# mixtral-8x7b and gpt-oss-120b, on vllm-async): `submitter tune-qps` from RATE, then its best VALID rate at full
# length. gpt-oss-120b on four H100s: SCENARIO=Server QPS=7.8 (0.85 of its Offline 9.23; one set of 6,396, about
# 14 minutes, 21 with the engine start and the two trials). On two
# H100s: SCENARIO=Server REPLICAS=1 QPS=38 for mixtral-8x7b (0.87 of one TP=2 group's Offline 43.4), whose full
# length at 38-40 qps asks 30,000 samples, about 13 minutes: 21 minutes with the engine start and the trials.
# mixtral's experts run on vLLM's Triton kernels (the descriptor's engine_args.moe_backend), which need no
# build: for the static per-tensor FP8 of the published checkpoint vLLM 0.26 otherwise picks FlashInfer's
# CUTLASS MoE on Hopper, which FlashInfer compiles on the host at the first engine start (182 objects, 48 built
# after 8 minutes on two H100s' 32 cores: the seventh lease in bench/RESULTS.md), and it refuses its own CUTLASS
# MoE ("cutlass") for a checkpoint whose quant_method is "fp8" (the ninth lease).
#
# A full-length run of the last two would take hours (equal-issue sets of 48,289 and 8,313 samples at a few
# samples/s), so they run as labelled trials (`--smoke --smoke-samples`) sized for 8-10 minutes of steady
# generation at the rate expected. llama3.1-405b as TP=4 on four H200s started in 228 s and answered its default
# 160 samples in 491 s, VALID at 0.33 samples/s (STOP_AFTER=1500; the sixteenth lease in bench/RESULTS.md): with a
# lease to spare, SAMPLES=240 for about 12 minutes. qwen3-vl made 10.47 samples/s compiled as
# one TP=2 group on two H200s (REPLICAS=1 TP=2 QPS=4 SAMPLES=5200, asked as nvidia-h200-x2 with needs_h200: 110.6
# GiB a GPU does not fit H100s; 8.3 minutes, the thirteenth lease in bench/RESULTS.md) over records whose prompts
# were 0.73 of those `data synth` now makes (the catalogue's profile): there, SAMPLES=4200 for about 9 minutes.
#
# Offline issues max(min queries, 1.1 x 600 s x target_qps) rounded up to whole data sets, and is VALID only
# where the engine needs 600 s or more for them: pick QPS from the rate expected on the GPUs lent (the plan's
# dry run, printed into the progress file, says how many samples QPS asks). llama2-70b on 4x H100 SXM did
# 33.5 samples/s; mixtral-8x7b did 43.4 as one TP=2 group of H100s, and about 30 on one H100 alone (a profiled
# 2,000-sample pass); gpt-oss-120b (5,015 prompt and 1,281 answer tokens a sample) did 9.23 as two TP=2 groups
# of H100s: on four H200s, where four TP=1 replicas may pass 10.7 samples/s, QPS=19 (two sets, 12,792)
# is VALID up to 21.3; on two H200s, REPLICAS=2 TP=1 QPS=9.6 (one set; planned per GPU: weights 60.8 GiB, KV
# cache 66.1 GiB, 599 sequences at the data set's mean), about 14 minutes at the one-H200 smoke's 4,613
# tokens/s a GPU, 21 with the staging and the start;
# whisper's requests go in by waves, so its rate depends on the host's CPUs: BASELINE=14 (below) runs one
# replica first, 9,798 samples in 1-3 minutes, and sizes the replicas' QPS from it (two H100s: 61.44 alone,
# 119.91 as two replicas, 0.976 of two times one; bench/RESULTS.md, the tenth lease).
# gpt-oss-120b's one replica would need a whole set of 6,396, about 40 minutes: its scaling compares trials
# (BASELINE_SAMPLES and SAMPLES, below): on two H100s REPLICAS=2 TP=1 BASELINE=3.6 BASELINE_SAMPLES=400
# SAMPLES=800 made 1.009 of two times one in 13 minutes (the seventeenth lease in bench/RESULTS.md).
# The model folders of whisper and qwen3-vl (processor and tokenizer, no weights) are built here by
# bench/multimodal_model_folders.py into .stage/mm and carried with the call that starts the run.
# mixtral-8x7b and llama3.1-405b are v6.0 benchmarks: that round's LoadGen 6.0.15 wheel is carried in
# .stage/loadgen (pip download --no-deps --only-binary :all: --python-version 3.12 --platform
# manylinux_2_28_x86_64 -d .stage/loadgen mlcommons-loadgen==6.0.15).
# Run from the checkout on the host after vLLM is in /tmp/site (bench/unpack_site.sh); it takes 15-25
# minutes, so start it detached:
#   QPS=37 setsid nohup bash bench/gpu_topology.sh llama2-70b-99.9 > /tmp/gpu-topology.log 2>&1 &
# then `bash bench/lease_wait.sh /tmp/gpu-topology` in calls sent in one batch (its header says why: the host goes
# back 30 s after a call); the files to bring back are gathered in /tmp/gpu-topology/out (and one-replica/out,
# with BASELINE below), which it packs.
# STOP_AFTER=S (bench/gpu_helpers.sh) stops a run still going S seconds after the script began and gathers what it
# did: in a 30-minute lease whose fifth call starts this about 3 minutes in, STOP_AFTER=1380 leaves 4 minutes
# to gather and bring the files back. Where the host came at once and the fifth call started it 75 s in (the
# fifteenth lease), STOP_AFTER=1560 leaves 2.5 minutes: 1380 there stopped llama3.1-405b 3 samples short.
set -uo pipefail
benchmark=${1:-llama2-70b-99.9}
scenario=${SCENARIO:-Offline}
if [ -n "${REPLICAS:-}" ] && [ -z "${QPS:-}${BASELINE:-}" ]; then
  echo "REPLICAS=$REPLICAS needs QPS or BASELINE: the descriptor's target_qps is sized for its own replicas" >&2
  exit 2
fi
if [ -n "${TP:-}" ] && [ -z "${REPLICAS:-}" ]; then
  echo "TP=$TP needs REPLICAS: say how many groups of $TP GPUs run" >&2
  exit 2
fi
if [ "$scenario" != Offline ]; then
  if [ -z "${QPS:-}" ] || [ -n "${BASELINE:-}" ]; then
    echo "SCENARIO=$scenario needs QPS, the rate tune-qps starts from, and takes no BASELINE" >&2
    exit 2
  fi
  if ! python3 -c "import json, sys; json.load(open('bench/systems/gpu_multi_dummy.json'))['benchmarks']\
['$benchmark']['scenarios']['$scenario']" 2> /dev/null; then
    echo "no $scenario setup for $benchmark in bench/systems/gpu_multi_dummy.json" >&2
    exit 2
  fi
fi
export RESULTS=/tmp/gpu-topology
source bench/gpu_host.sh

round=v6.1 modes=(--mode TEST06 --mode performance) shortened='' layers=()
case $benchmark in
  llama2-70b-99.9) model=/tmp/dummy-llama2-70b data=/tmp/openorca-synthetic-full.pkl ;;
  mixtral-8x7b) model=/tmp/dummy-mixtral-8x7b data=/tmp/mixtral-synthetic-full.pkl round=v6.0 ;;
  gpt-oss-120b) model=/tmp/dummy-gpt-oss-120b data=/tmp/gpt-oss-120b-synthetic-full
    modes=(--mode performance) ;;  # TEST07 and TEST09 ran on one H200 (issue 21); TEST09 is a second full set
  whisper) model=/tmp/mm/whisper-large-v3 data=/tmp/whisper-synthetic-full/dev-all-repack.json
    modes=(--mode performance) ;;  # TEST01 ran on one H200 (issue 22) and would double the run
  qwen3-vl-235b-a22b) model=/tmp/mm/qwen3-vl-235b-a22b data=/tmp/qwen3-vl-synthetic-shortened
    modes=(--mode performance) shortened=${SAMPLES:-4800} ;;
  llama3.1-405b) model=/tmp/dummy-llama3.1-405b data=/tmp/llama3.1-405b-synthetic-shortened.pkl round=v6.0
    modes=(--mode performance) shortened=${SAMPLES:-160} layers=(${LAYERS:+--layers "$LAYERS"}) ;;
  *) echo "no multi-GPU setup for $benchmark in bench/systems/gpu_multi_dummy.json" >&2; exit 2 ;;
esac
if [ "$round" = v6.0 ]; then
  export SUBMITTER_LOADGEN_DIR=/tmp/loadgen
  [ -d /tmp/loadgen/6.0.15 ] || python3 -m pip install -q --no-deps --target /tmp/loadgen/6.0.15 .stage/loadgen/*.whl
fi
if [ "$(dirname "$model")" = /tmp/mm ]; then  # a model folder with its processor, carried in .stage/mm
  mkdir -p /tmp/mm && cp -r ".stage/mm/$(basename "$model")" /tmp/mm/
else
  timed submitter data dummy-model --benchmark "$benchmark" --precision published "${layers[@]}" --out "$model"
fi
records=() trial=()
if [ -n "$shortened" ]; then
  records=(--samples "$shortened") trial=(--smoke --smoke-samples "$shortened")
  log "$benchmark shortened: one pass over $shortened records"
elif [ -n "${SAMPLES:-}" ]; then  # a trial of a full-length benchmark (replica scaling): the data set's first
  trial=(--smoke --smoke-samples "$SAMPLES") modes=(--mode performance)
  log "$benchmark shortened: one pass over the first $SAMPLES records"
fi
mkdir -p "$(dirname "$data")"
[ -e "$data" ] || timed submitter data synth --benchmark "$benchmark" --round "$round" "${records[@]}" --out "$data"

# RAW=1 first profiles the raw engine, one replica of the setup (with TP's group size where TP is given), over
# RAW_SAMPLES (default 4,000) prompts: bench/raw_offline.py --profile, each GPU's kernel time by kind and idle
# share into out/raw-profile.json (the workers' traces stay in raw-profile.traces/).
if [ "${RAW:-0}" = 1 ]; then
  descriptor_at_rate gpu_multi_dummy "$benchmark" Offline 1 "$RESULTS/raw-systems" 1 ${TP:-}
  SUBMITTER_SYSTEMS_PATH=$RESULTS/raw-systems timed python3 bench/raw_offline.py --system gpu_multi_dummy \
    --benchmark "$benchmark" --round "$round" --samples "${RAW_SAMPLES:-4000}" --profile \
    --out "$RESULTS/raw-profile.json" > "$RESULTS/raw-profile.log" 2>&1
  mkdir -p "$RESULTS/out" && cp "$RESULTS/raw-profile.json" "$RESULTS/out/" 2> /dev/null
fi

# SCENARIO=Server (or Interactive, where the descriptor sets it up) runs that scenario instead of Offline:
# `submitter tune-qps` from QPS, two 120-s trials (x 1.05 while VALID) and the best VALID rate at full length,
# on one engine (vLLM's AsyncLLM, replicas as its data parallelism).
if [ "$scenario" != Offline ]; then
  descriptor_at_rate gpu_multi_dummy "$benchmark" "$scenario" "$QPS" "$RESULTS/systems" ${REPLICAS:-} ${TP:-}
  export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
  tune_and_gather gpu_multi_dummy "$benchmark" "$scenario" "$QPS" --round "$round" --step 1.05 --precision 0.03 \
    --trial-seconds 120 --max-trials 2
  keep_caches
  log "done $benchmark"
  exit 0
fi

# BASELINE=RATE first runs one replica alone (the same TP group, on the first GPUs and the first replica's
# share of the CPUs, so with the same CPUs and threads) at target_qps RATE: an Offline performance run of a few
# minutes, INVALID only for its length, whose samples/s is the one-replica figure the replicas' scaling is
# measured against, on the same host. Without QPS, the replicas then ask
# replicas x that rate: 660 s of samples at exactly that, VALID up to 1.1 times it (four whisper replicas beat
# 0.95 x four times a replica that ran with other thread settings, and missed the 600 s), 733 s at 0.9.
# BASELINE_SAMPLES=N makes that one replica's run a labelled trial of N samples (`--smoke --smoke-samples`)
# instead, for benchmarks whose equal-issue sets take one replica too long (llama2-70b: 24,576 samples, about
# 24 minutes for one TP=2 group of H100s); give QPS too, since a trial's rate understates a whole run's. Replica
# scaling compares steady rates (run.json's harness.steady, summary.md's "steady samples/s": the middle half of
# the answers, without the engine filling up and draining), which a trial and a whole run share. SAMPLES=M
# makes the replicas' run a trial too (one pass over the data set's first M records, performance only), so that
# both fit one lease: gpt-oss-120b on four H100s, REPLICAS=2 TP=2 QPS=9.6 BASELINE=4.6 BASELINE_SAMPLES=1500
# SAMPLES=3000 (two engine starts of about 4 minutes, then about 6 minutes each: 21 minutes); on four H200s,
# REPLICAS=4 TP=1 BASELINE=3.6 BASELINE_SAMPLES=1200 SAMPLES=4800 (one replica started in 169 s and made 3.2
# samples/s steady, four started in about 140 s: about 20 minutes, the sixteenth lease); llama2-70b,
# BASELINE=17 BASELINE_SAMPLES=6000 SAMPLES=12000 QPS=33.
if [ -n "${BASELINE:-}" ]; then
  descriptor_at_rate gpu_multi_dummy "$benchmark" Offline "$BASELINE" "$RESULTS/replicas-plan" ${REPLICAS:-} ${TP:-}
  share=$(SUBMITTER_SYSTEMS_PATH=$RESULTS/replicas-plan submitter run-all --system gpu_multi_dummy \
    --benchmark "$benchmark" --round "$round" --scenario Offline --mode performance --dry-run --json 2> /dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['runs'][0]['topology']['replicas'][0]['cpus'] or '')" 2> /dev/null)
  (
    RESULTS=$RESULTS/one-replica
    mkdir -p "$RESULTS" && cp "$(dirname "$RESULTS")"/{gpus,cpus}.txt "$RESULTS/"
    if [ -n "$share" ] && taskset -pc "$share" "$BASHPID" > /dev/null; then
      log "one replica on CPUs $share, the first replica's share"
    fi
    descriptor_at_rate gpu_multi_dummy "$benchmark" Offline "$BASELINE" "$RESULTS/systems" 1 ${TP:-}
    export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
    run_and_gather gpu_multi_dummy "$benchmark" --round "$round" --scenario Offline --mode performance \
      ${BASELINE_SAMPLES:+--smoke --smoke-samples "$BASELINE_SAMPLES"}
  )
  rate=$(sed -n 's/^Samples per second *: *//p' "$RESULTS/one-replica/out/performance.mlperf_log_summary.txt")
  steady=$(python3 -c "import json, sys; s = (json.load(open(sys.argv[1]))['harness'] or {}).get('steady'); \
print(s['samples_per_second'] if s else '')" "$RESULTS/one-replica/out/performance.run.json" 2> /dev/null)
  log "one replica alone: ${rate:-no} samples/s, ${steady:-no} steady (the middle half of its answers)"
  if [ -z "${QPS:-}" ] && [ -n "$rate" ]; then
    replicas=${REPLICAS:-$(python3 -c "import json; print(json.load(open('bench/systems/gpu_multi_dummy.json'))\
['benchmarks']['$benchmark'].get('replicas', 1))")}
    QPS=$(python3 -c "print(round($replicas * $rate, 1))")
  fi
fi
if [ -n "${QPS:-}" ]; then
  descriptor_at_rate gpu_multi_dummy "$benchmark" Offline "$QPS" "$RESULTS/systems" ${REPLICAS:-} ${TP:-}
  export SUBMITTER_SYSTEMS_PATH=$RESULTS/systems
  log "$benchmark target_qps $QPS"
fi
run_and_gather gpu_multi_dummy "$benchmark" --round "$round" --scenario Offline "${modes[@]}" "${trial[@]}"
if [ -n "${BASELINE:-}" ]; then  # the replicas' steady rate beside one replica's (bench/replica_scaling.py)
  python3 bench/replica_scaling.py "$RESULTS/one-replica/out/performance.run.json" \
    "$RESULTS/out/performance.run.json" > "$RESULTS/out/scaling.txt" 2>&1
  log "scaling: $(cat "$RESULTS/out/scaling.txt")"
fi
keep_caches
log "done $benchmark"
