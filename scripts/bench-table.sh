#!/usr/bin/env bash
# bench-table.sh: delego against the real TensorFlow Lite 2.9, as Markdown
# tables headed by the machine's ISA line. Run with --help for the details.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/bench-table.sh [--part builtin|xnnpack] [--check] [RUNS] [MODEL...]

Times delego and the real TensorFlow Lite 2.9 (../shared/tools/tflite-ref,
set up on first use) on the same models, one process at a time, and prints
Markdown tables, each under a line that records the machine: the CPU's model
name and vector extensions, and the kernel sets delego picked on it (8-bit
and float, from `delego bench --json`).

Part "builtin": TFLite 2.9's builtin kernels, 1 and 2 threads: per model the
1-thread ratio delego / TFLite and each runtime's 2-thread speedup, from 5
rounds of scripts/bench-threads.sh. Default models: ../shared/models, less
the Edge TPU ones, PoseNet (a Coral custom op) and the failing test model.

Part "xnnpack": TFLite 2.9 with its XNNPACK delegate, one thread, over a broad
set of models users run (the shared models, Coral's test models, MediaPipe's
landmark, face, segmentation models, an audio classifier, a segmentation
model and detectors from TensorFlow Lite Support and TFLite Micro; see
DEFAULT SET below). XNNPACK gets its QS8 flag (tflbench -f 1) for int8 graphs;
TFLite 2.9's XNNPACK does not run uint8 graphs, so for those the reference
is TFLite's builtin kernels, marked "builtin", as it is for a graph whose
XNNPACK runtime TFLite fails to create. A graph's kind is read from the
types of its ops' first inputs (any INT8: int8; else any UINT8: uint8;
else float). Each of ROUNDS rounds runs every model on both runtimes back
to back, delego first in odd rounds and TFLite first in even ones, each
for WARMUP untimed and RUNS timed invokes;
the table gives the median over the rounds of each runtime's median and of
the ratio delego / TFLite taken within each round (with the rounds' range),
so that a shared machine's changing load moves both sides of a ratio alike.

Both parts run by default; --part picks one. RUNS: timed invokes per
measurement (default 20). MODEL...: .tflite files instead of the defaults,
for both parts.

  --part P    run only part P (builtin or xnnpack)
  --check     afterwards compare every model's outputs with TFLite 2.9's
              builtin kernels (scripts/compare-with-tflite.sh, on tflbench's
              seed:1 input); exits 1 when any differs
  --fetch     fetch the default set into the cache, print its paths and exit
  -h, --help  show this help

Environment:
  DELEGO_BENCH_CACHE   where fetched models are kept (default
                       ${XDG_CACHE_HOME:-~/.cache}/delego-bench); they never
                       enter the repository
  ROUNDS               rounds of the xnnpack part (default 5)
  WARMUP               untimed invokes before each xnnpack-part measurement
                       (default 5)
  DELEGO_SHARED, DELEGO_TFLITE_REF   as for the other scripts (tflite-ref.sh)

DEFAULT SET of the xnnpack part, each pinned: GitHub files by commit and
checked against their git blob hash, npm packages by version (npm checks the
registry's integrity hash). Fetching needs curl and npm the first time.
EOF
  printf '  %s\n' "${SET[@]}" | awk '{printf "  %-42s %s\n", $1, $2}'
}

# SET: name and source of each model of the xnnpack part's default set:
#   shared:FILE                         ../shared/models/FILE
#   github:OWNER/REPO@COMMIT:PATH#BLOB  a file of a repository at a commit;
#                                       BLOB is its git blob hash
#   npm:PACKAGE@VERSION:FILE            a file of an npm package
#   npm:PACKAGE@VERSION:DATA#ASSET      ASSET packed into DATA, an Emscripten
#                                       asset bundle of the package whose
#                                       loader (DATA's name less ".data",
#                                       plus "_loader.js") gives its offsets
coral=github:google-coral/test_data@104342d2d3480b3e66203073dac24f4e2dbb4c41
support=github:tensorflow/tflite-support@dd3362ea685bb7ab1f7268c81ec567d3b720ae57:tensorflow_lite_support/cc/test/testdata/task
micro=github:tensorflow/tflite-micro@90b983c2b3f1480642e040bbd2ddb37b998f3424:tensorflow/lite/micro/examples
SET=(
  "mobilenet_v1_0.25_128_float shared:mobilenet_v1_0.25_128_float.tflite"
  "mobilenet_v1_0.25_128_quant shared:mobilenet_v1_0.25_128_quant.tflite"
  "mobilenet_v2_1.0_224_float shared:mobilenet_v2_1.0_224_float.tflite"
  "mobilenet_v2_1.0_224_quant shared:mobilenet_v2_1.0_224_quant.tflite"
  "tf2_mobilenet_v2_1.0_224_ptq shared:tf2_mobilenet_v2_1.0_224_ptq.tflite"
  "keras_lstm_mnist_ptq shared:keras_lstm_mnist_ptq.tflite"
  "split_concat shared:split_concat.tflite"
  "coral_mobilenet_v1_0.5_160_quant $coral:mobilenet_v1_0.5_160_quant.tflite#9e1cfe5f512774a651ce19aab416789463b69665"
  "coral_mobilenet_v1_0.75_192_quant $coral:mobilenet_v1_0.75_192_quant.tflite#cd76cbdc9cfa8ccc7fd1617b62f4fb250e4c9bee"
  "coral_mobilenet_v1_1.0_224_quant_embedding_extractor $coral:mobilenet_v1_1.0_224_quant_embedding_extractor.tflite#8886421f40a40b431334610460fc04c924d57f20"
  "coral_mobilenet_quant_v1_224_head_layers $coral:tools/mobilenet_quant_v1_224_head_layers.tflite#122ca42fb9ccd2eda7406a223de0b199e6508896"
  "coral_mobilenet_v2_1.0_224_inat_bird_quant $coral:mobilenet_v2_1.0_224_inat_bird_quant.tflite#225ffa93c74237a64e1a5782fce3dfbc61f9d380"
  "coral_movenet_single_pose_lightning_ptq $coral:movenet_single_pose_lightning_ptq.tflite#67a2124a1935f304b3b282a475b9205822dc6274"
  "coral_traffic_model $coral:automl_video_ondevice/traffic_model.tflite#353fcaf50486fcde3ab7c7486ec220a12d11697b"
  "coral_deeplabv3_mnv2_pascal_quant $coral:deeplabv3_mnv2_pascal_quant.tflite#cfb544901b574fc95309f4d3cd33b81934642f1c"
  "coral_deeplabv3_mnv2_dm05_pascal_quant $coral:deeplabv3_mnv2_dm05_pascal_quant.tflite#c5fdea1551c6b0b799e92d72ce8a3fe46cdd5e13"
  "mediapipe_hand_landmark_lite npm:@mediapipe/hands@0.4.1675469240:hand_landmark_lite.tflite"
  "mediapipe_hand_landmark_full npm:@mediapipe/hands@0.4.1675469240:hand_landmark_full.tflite"
  "mediapipe_pose_landmark_lite npm:@mediapipe/pose@0.5.1675469404:pose_landmark_lite.tflite"
  "mediapipe_pose_landmark_full npm:@mediapipe/pose@0.5.1675469404:pose_landmark_full.tflite"
  "mediapipe_face_detection_short_range npm:@mediapipe/face_detection@0.4.1657300184:face_detection_short_range.tflite"
  "mediapipe_face_detection_full_range npm:@mediapipe/face_detection@0.4.1657300184:face_detection_full_range.tflite"
  "mediapipe_face_landmark npm:@mediapipe/face_mesh@0.4.1657299874:face_mesh_solution_packed_assets.data#face_landmark.tflite"
  "mediapipe_selfie_segmentation npm:@mediapipe/selfie_segmentation@0.1.1675465747:selfie_segmentation.tflite"
  "support_yamnet_audio_classifier $support/audio/yamnet_audio_classifier_with_metadata.tflite#76e86277b1a1a08c64a89420fcdcf25efed02ead"
  "support_deeplabv3 $support/vision/deeplabv3.tflite#e3fdb7dcd75596f994ae2be170ea2d28a5b6b40a"
  "support_coco_ssd_mobilenet_v1_1.0_quant $support/vision/coco_ssd_mobilenet_v1_1.0_quant_2018_06_29.tflite#02ecbf8f0a23b2393a4fc6b9094cacca62af0780"
  "micro_speech_quantized $micro/micro_speech/models/micro_speech_quantized.tflite#4d10b2ee2378c4f85ce5c58b2bd11ce18b3d09be"
)

PART=both CHECK=0 FETCH=0
while (($# > 0)); do
  case $1 in
  -h | --help) usage; exit 0 ;;
  --part)
    [[ ${2:-} == builtin || ${2:-} == xnnpack ]] || { echo "bench-table.sh: --part takes builtin or xnnpack, got \"${2:-}\"" >&2; exit 2; }
    PART=$2; shift 2 ;;
  --check) CHECK=1; shift ;;
  --fetch) FETCH=1; shift ;;
  -*) echo "bench-table.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
  *) break ;;
  esac
done
RUNS=20
if [[ ${1:-} =~ ^[0-9]+$ ]]; then RUNS=$1; shift; fi
((RUNS > 0)) || { echo "bench-table.sh: RUNS must be at least 1" >&2; exit 2; }
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-5}
for v in ROUNDS WARMUP; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench-table.sh: $v must be a number, got \"${!v}\"" >&2; exit 2; }
done
((ROUNDS > 0)) || { echo "bench-table.sh: ROUNDS must be at least 1" >&2; exit 2; }
for m in "$@"; do
  [[ -f $m ]] || { echo "bench-table.sh: no model file $m" >&2; exit 2; }
done

# shellcheck source=scripts/tflite-ref.sh
source "$(dirname "$0")/tflite-ref.sh"
CACHE=${DELEGO_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/delego-bench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# blob_ok FILE BLOB: whether FILE's git blob hash is BLOB.
blob_ok() {
  python3 - "$1" "$2" <<'PY'
import hashlib, sys
data = open(sys.argv[1], "rb").read()
sys.exit(hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() != sys.argv[2])
PY
}

# fetch SOURCE: prints the path of SOURCE's model (see SET), fetching it into
# the cache first when it is not there.
fetch() {
  local src=$1 spec pkg file asset dest repo commit path blob tmp
  case $src in
  shared:*)
    echo "$SHARED/models/${src#shared:}" ;;
  github:*)
    spec=${src#github:} blob=${src##*#}
    spec=${spec%#*}
    repo=${spec%%@*} commit=${spec#*@}
    path=${commit#*:} commit=${commit%%:*}
    dest=$CACHE/github/$repo/$commit/$path
    if [[ ! -f $dest ]]; then
      mkdir -p "$(dirname "$dest")"
      tmp=$dest.part
      curl -fsSL "https://raw.githubusercontent.com/$repo/$commit/$path" -o "$tmp" || { rm -f "$tmp"; false; } ||
        { echo "bench-table.sh: cannot download $path of $repo at $commit" >&2; return 1; }
      mv "$tmp" "$dest"
    fi
    blob_ok "$dest" "$blob" ||
      { echo "bench-table.sh: $dest is not $repo's $path at $commit (git blob hash is not $blob); delete it to fetch it again" >&2; return 1; }
    echo "$dest" ;;
  npm:*)
    spec=${src#npm:}
    pkg=${spec%:*} file=${spec##*:}
    asset=
    [[ $file == *"#"* ]] && asset=${file#*#} file=${file%#*}
    dest=$CACHE/npm/$pkg
    if [[ ! -f $dest/package/$file ]]; then
      mkdir -p "$dest"
      (cd "$dest" && npm pack --silent "$pkg" >/dev/null && tar -xzf ./*.tgz && rm -f ./*.tgz) ||
        { echo "bench-table.sh: cannot fetch the npm package $pkg" >&2; return 1; }
      [[ -f $dest/package/$file ]] || { echo "bench-table.sh: the npm package $pkg has no $file" >&2; return 1; }
    fi
    if [[ -z $asset ]]; then
      echo "$dest/package/$file"
      return
    fi
    if [[ ! -f $dest/assets/$asset ]]; then
      mkdir -p "$dest/assets"
      python3 - "$dest/package/$file" "$dest/package/${file%.data}_loader.js" "$asset" "$dest/assets/$asset" <<'PY' || return 1
import re, sys
data, loader, asset, out = sys.argv[1:]
js = open(loader).read()
m = re.search(r'"filename":\s*"[^"]*/' + re.escape(asset) + r'",\s*"start":\s*(\d+),\s*"end":\s*(\d+)', js)
if not m:
    sys.exit(f"bench-table.sh: {loader} lists no asset {asset}")
start, end = int(m.group(1)), int(m.group(2))
blob = open(data, "rb").read()[start:end]
if len(blob) != end - start or blob[4:8] != b"TFL3":
    sys.exit(f"bench-table.sh: bytes {start}-{end} of {data} are not a .tflite model")
open(out, "wb").write(blob)
PY
    fi
    echo "$dest/assets/$asset" ;;
  *)
    echo "bench-table.sh: unknown model source $src" >&2; return 1 ;;
  esac
}

# machine: the ISA line: the CPU, its vector extensions, the kernel sets
# delego's CPU kernels picked and the two runtimes' versions.
machine() {
  local cpu flags sets
  cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
  [[ -n $cpu ]] || cpu=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}' || true)
  [[ -n $cpu ]] || cpu=unknown
  if grep -q '^cpu family' /proc/cpuinfo 2>/dev/null; then
    cpu="$cpu ($(awk -F': ' '/^cpu family/ {f = $2} /^model\t/ {m = $2} END {print "family " f ", model " m}' /proc/cpuinfo))"
  fi
  flags=$(grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | tr ' ' '\n' |
    grep -x -E 'avx2|fma|avx512f|avx512bw|avx512_vnni|avx_vnni|avx512_vbmi|asimd|asimddp|i8mm' | tr '\n' ' ' || true)
  sets=$(bin/delego bench "$SHARED/models/split_concat.tflite" --runs 1 --json |
    python3 -c 'import json, sys; k = json.load(sys.stdin)["kernels"]; print("8-bit %s, float %s" % (k["q8"], k["float"]))')
  echo "Machine: $cpu, $(nproc) CPUs; extensions: ${flags% }; delego CPU kernels: $sets;" \
    "$(bin/delego version), commit $(git describe --always --dirty 2>/dev/null || echo unknown); TensorFlow Lite 2.9 ($REF, timed by scripts/tflite-ns.c)."
}

# kind MODEL: float, int8 or uint8 (see --help); float/fp16 for a float
# graph with float16 weights (constants it DEQUANTIZEs).
kind() {
  bin/delego inspect --json "$1" | python3 -c '
import json, sys
types, fp16 = set(), False
for sg in json.load(sys.stdin)["subgraphs"]:
    for op in sg["operators"]:
        if not op["inputs"]:
            continue
        t = sg["tensors"][op["inputs"][0]]["type"]
        types.add(t)
        fp16 |= op["op"] == "DEQUANTIZE" and t == "FLOAT16"
print("int8" if "INT8" in types else "uint8" if "UINT8" in types else "float/fp16" if fp16 else "float")'
}

# builtin_part MODEL...: the table against TFLite's builtin kernels.
builtin_part() {
  local m r d t
  echo "| model | delego / TFLite, 1 thread | delego 2 threads vs 1 | TFLite 2 threads vs 1 |"
  echo "| --- | ---: | ---: | ---: |"
  for m in "$@"; do
    # "ratio delego tflite": delego's 1-thread time over TFLite's and each
    # runtime's 2-thread speedup, from rounds that time both runtimes at 1
    # and 2 threads back to back (bench-threads.sh).
    read -r r d t < <(scripts/bench-threads.sh "$m" 5 "$RUNS" 2 | awk '
      function after(word,  i) { for (i = 1; i <= NF; i++) if ($i == word) { sub("x", "", $(i+1)); return $(i+1) } }
      /^delego .*threads vs 1/ { d = after("1:") } /^TFLite .*threads vs 1/ { t = after("1:") }
      /1 thread:/ { r = after("thread:") } END { print r, d, t }')
    printf "| %s | %sx | %sx | %sx |\n" "$(basename "$m" .tflite)" "$r" "$d" "$t"
  done
}

# delego_ms NAME MODEL: delego's median, one thread; or "fail", with its
# message added to the notes.
delego_ms() {
  bin/delego bench "$2" --runs "$RUNS" --warmup "$WARMUP" --threads 1 --no-profile --json 2>"$work/err" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["median_ms"])' 2>/dev/null || {
    echo "fail"
    echo "$1: delego: $(tail -1 "$work/err")" >>"$work/notes"
  }
  if [[ -s $work/err ]]; then echo "$1: delego: $(head -1 "$work/err")" >>"$work/notes"; fi
}

# tflite_ms NAME MODEL KIND: TFLite 2.9's median, one thread, and the
# kernels that ran: XNNPACK (with its QS8 flag for int8), or for uint8, or
# where TFLite fails to create the XNNPACK runtime, its builtin kernels; or
# "fail -", with the error added to the notes.
tflite_ms() {
  local flags=(-f 0) ref=XNNPACK
  case $3 in int8) flags=(-f 1) ref=XNNPACK-QS8 ;; uint8) flags=() ref=builtin ;; esac
  local run=("$REF/bin/tflbench" "${flags[@]}" "$2" seed:1 1 "$([[ $ref == builtin ]] && echo 0 || echo 1)" 1)
  if [[ $ref != builtin ]] && ! "${run[@]}" >"$work/out" 2>"$work/err"; then
    echo "$1: TFLite 2.9 with XNNPACK: $(grep -m1 ERROR "$work/err" || tail -1 "$work/err"); its builtin kernels stand in" >>"$work/notes"
    ref=builtin-fallback run=("$REF/bin/tflbench" "$2" seed:1 1 0 1)
  fi
  if [[ $ref == builtin* ]] && ! "${run[@]}" >"$work/out" 2>"$work/err"; then
    echo "$1: TFLite 2.9: $(grep -m1 ERROR "$work/err" || tail -1 "$work/err")" >>"$work/notes"
    echo "fail -"
    return
  fi
  # tflbench says whether TFLite runs the model; tflite-ns times it to
  # the nanosecond, on the same kernels.
  local xnn=1 flag=0
  case $ref in builtin*) xnn=0 ;; XNNPACK-QS8) flag=1 ;; esac
  echo "$(tflite_median_ms "$2" 1 "$xnn" "$flag" "$WARMUP" "$RUNS" | grep . || echo fail) $ref"
}

# xnnpack_part NAME=MODEL...: the table against TFLite with XNNPACK.
xnnpack_part() {
  local entry name m k round a b
  declare -A kinds
  for entry in "$@"; do kinds[${entry%%=*}]=$(kind "${entry#*=}"); done
  for ((round = 1; round <= ROUNDS; round++)); do
    for entry in "$@"; do
      name=${entry%%=*} m=${entry#*=} k=${kinds[$name]}
      if ((round % 2)); then
        a=$(delego_ms "$name" "$m") b=$(tflite_ms "$name" "$m" "${k%/*}")
      else
        b=$(tflite_ms "$name" "$m" "${k%/*}") a=$(delego_ms "$name" "$m")
      fi
      echo "$name $k $a $b" >>"$work/rounds" # b: "median kernels"
    done
  done
  python3 - "$work/rounds" "$@" <<'PY'
import statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    name, kind, d, t, ref = line.split()
    rounds.setdefault(name, []).append((kind, d, t, ref))
print("| model | graph | delego ms | TFLite 2.9 ms | delego / TFLite (rounds) | TFLite's kernels |")
print("| --- | --- | ---: | ---: | ---: | --- |")
for entry in sys.argv[2:]:
    name = entry.split("=", 1)[0]
    kind = rounds[name][0][0]
    refs = {x[3] for x in rounds[name]} - {"-"}
    ref = "builtin, XNNPACK fails" if "builtin-fallback" in refs else ", ".join(sorted(refs)).replace("-", ", ") or "-"
    d = [float(x[1]) for x in rounds[name] if x[1] != "fail"]
    t = [float(x[2]) for x in rounds[name] if x[2] != "fail"]
    r = [float(x[1]) / float(x[2]) for x in rounds[name] if "fail" not in x[1:]]
    cell = lambda v: f"{statistics.median(v):.3g}" if v else "fails"
    ratio = f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})" if r else "-"
    print(f"| {name} | {kind.replace('/fp16', ', fp16 weights')} | {cell(d)} | {cell(t)} | {ratio} | {ref} |")
PY
  if [[ -s $work/notes ]]; then
    echo
    sort -u "$work/notes" | sed 's/^/Note: /'
  fi
}

mkdir -p bin
go build -o bin/delego ./cmd/delego

# default_set: NAME=PATH of each model of SET, fetched; fails at the first
# model that cannot be fetched.
default_set() {
  local entry path
  for entry in "${SET[@]}"; do
    path=$(fetch "${entry#* }") || return 1
    echo "${entry%% *}=$path"
  done
}
if ((FETCH)); then
  default_set
  exit
fi

builtin_models=("$@") broad=()
for m in "$@"; do broad+=("$(basename "$m" .tflite)=$m"); done
if (($# == 0)); then
  for m in "$SHARED"/models/*.tflite; do
    case $m in *edgetpu* | *posenet* | *model_invoking_error*) continue ;; esac
    builtin_models+=("$m")
  done
  if [[ $PART != builtin ]]; then
    mapfile -t broad < <(default_set)
    ((${#broad[@]} == ${#SET[@]})) || exit 1
  fi
fi

isa=$(machine)
if [[ $PART != xnnpack ]]; then
  echo "$isa"
  echo "TensorFlow Lite 2.9's builtin kernels: $RUNS timed runs, 5 rounds (scripts/bench-threads.sh)"
  echo
  builtin_part "${builtin_models[@]}"
  echo
fi
if [[ $PART != builtin ]]; then
  echo "$isa"
  echo "TensorFlow Lite 2.9 with XNNPACK, one thread: $ROUNDS rounds of $WARMUP untimed and $RUNS timed invokes each"
  echo
  xnnpack_part "${broad[@]}"
  echo
fi
if ((CHECK)); then
  paths=()
  if [[ $PART == builtin ]]; then paths=("${builtin_models[@]}"); else for entry in "${broad[@]}"; do paths+=("${entry#*=}"); done; fi
  scripts/compare-with-tflite.sh "${paths[@]}"
fi
