#!/usr/bin/env bash
# Submit a twin command as a Slurm job array of N slices, then the merge job
# that runs once every slice has succeeded.
#
# Usage:
#   deploy/slurm/submit.sh --shards N --parts PARTS_DIR --out RESULT_DIR [OPTIONS] -- COMMAND [ARGS...]
# for example
#   deploy/slurm/submit.sh --shards 3 --parts /shared/sweep-parts --out /shared/sweep \
#       -- sweep scenarios/quickstart.toml --set cluster.nodes=3,4,5
#
# Task I of the array runs `twin COMMAND ARGS... --shard I/N --out PARTS_DIR`;
# the merge job runs `twin merge PARTS_DIR --out RESULT_DIR`. Paths are taken
# from the current directory, which (like PARTS_DIR, RESULT_DIR and the twin
# binary) must be visible from every node.
#
# Prints both job ids, and last the two lines
#   array_job_id=ID
#   merge_job_id=ID
# for scripts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
    cat <<USAGE
Usage: $0 --shards N --parts PARTS_DIR --out RESULT_DIR [OPTIONS] -- COMMAND [ARGS...]

Runs twin COMMAND (sweep, plan, validate or explore) as a Slurm job array of N
tasks, task I running 'twin COMMAND ARGS... --shard I/N --out PARTS_DIR', then
'twin merge PARTS_DIR --out RESULT_DIR' once all N tasks have succeeded.

Required:
  --shards N         number of slices (array tasks), 1 or more
  --parts DIR        shared folder for the slices' shard-I-of-N.json files
  --out DIR          shared folder for the merged results
Options:
  --twin PATH        the twin binary, on a path every node sees
                     (default: \$TWIN, else 'twin' found on PATH)
  --logs DIR         folder for the jobs' Slurm output (default: PARTS_DIR-logs)
  --clean            delete old shard-*-of-*.json files in PARTS_DIR first
                     (by default their presence is an error)
  --max-running K    run at most K array tasks at once (--array=1-N%K)
  --sbatch-arg ARG   pass ARG to both sbatch calls (repeatable), e.g.
                     --sbatch-arg=--partition=batch --sbatch-arg=--time=30
                     --sbatch-arg=--cpus-per-task=4
  -h, --help         this help
Example:
  $0 --shards 3 --parts /shared/parts --out /shared/sweep \\
      -- sweep scenarios/quickstart.toml --set cluster.nodes=3,4,5
USAGE
}

die() {
    echo "submit.sh: $*" >&2
    echo "Run '$0 --help' for usage." >&2
    exit 2
}

# Absolute form of a directory path (created if missing).
abs_dir() {
    mkdir -p -- "$1" && (cd -- "$1" && pwd)
}

shards="" parts="" out="" logs="" twin=${TWIN:-} clean=false max_running=""
sbatch_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --shards) [[ $# -ge 2 ]] || die "--shards needs a value"; shards=$2; shift 2 ;;
    --shards=*) shards=${1#*=}; shift ;;
    --parts) [[ $# -ge 2 ]] || die "--parts needs a value"; parts=$2; shift 2 ;;
    --parts=*) parts=${1#*=}; shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --logs) [[ $# -ge 2 ]] || die "--logs needs a value"; logs=$2; shift 2 ;;
    --logs=*) logs=${1#*=}; shift ;;
    --twin) [[ $# -ge 2 ]] || die "--twin needs a value"; twin=$2; shift 2 ;;
    --twin=*) twin=${1#*=}; shift ;;
    --max-running) [[ $# -ge 2 ]] || die "--max-running needs a value"; max_running=$2; shift 2 ;;
    --max-running=*) max_running=${1#*=}; shift ;;
    --sbatch-arg) [[ $# -ge 2 ]] || die "--sbatch-arg needs a value"; sbatch_args+=("$2"); shift 2 ;;
    --sbatch-arg=*) sbatch_args+=("${1#*=}"); shift ;;
    --clean) clean=true; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (the twin command goes after '--')" ;;
    esac
done

# Check everything before submitting anything.
[[ -n $shards ]] || die "missing --shards N"
[[ $shards =~ ^[1-9][0-9]*$ ]] || die "--shards must be a whole number of 1 or more, got '$shards'"
[[ -z $max_running || $max_running =~ ^[1-9][0-9]*$ ]] || die "--max-running must be a whole number of 1 or more, got '$max_running'"
[[ -n $parts ]] || die "missing --parts DIR"
[[ -n $out ]] || die "missing --out DIR"
[[ $# -ge 1 ]] || die "missing the twin command after '--', e.g. -- sweep scenarios/quickstart.toml --set cluster.nodes=3,4,5"
case $1 in
sweep | plan | validate | explore) ;;
merge) die "'merge' is what the merge job runs; give the command to split (sweep, plan, validate or explore)" ;;
-*) die "the twin command after '--' must start with a subcommand (sweep, plan, validate or explore), got '$1'" ;;
*) echo "submit.sh: warning: '$1' is not one of sweep, plan, validate, explore; submitting anyway" >&2 ;;
esac
for a in "$@"; do
    case $a in
    --shard | --shard=*) die "do not pass --shard to the twin command: each array task adds its own" ;;
    --out | --out=*) die "do not pass --out to the twin command: tasks write to --parts, the merge to submit.sh's --out" ;;
    esac
done
command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm submit host"

if [[ -z $twin ]]; then
    twin=$(command -v twin) || die "no twin binary: pass --twin PATH or set TWIN (or put twin on PATH)"
elif [[ $twin != */* ]]; then
    found=$(command -v -- "$twin") || die "twin binary '$twin' not found on PATH"
    twin=$found
fi
[[ -f $twin && -x $twin ]] || die "the twin binary is not an executable file: $twin"
# An absolute path, so that the jobs run the same binary whatever their directory.
twin_dir=$(cd -- "$(dirname -- "$twin")" && pwd)
twin=${twin_dir%/}/$(basename -- "$twin")
[[ $twin != *,* ]] || die "the twin binary's path cannot contain a comma (sbatch --export): $twin"
help=$("$twin" "$1" --help 2>&1) || die "'$twin $1 --help' failed: is '$1' a twin command?"
[[ $help == *--shard* ]] \
    || die "'$twin $1' has no --shard option (too old a twin, or a command that cannot be split)"

parts=$(abs_dir "$parts")
out=$(abs_dir "$out")
logs=$(abs_dir "${logs:-${parts}-logs}")

# Old slices in PARTS_DIR would be merged with the new ones (or make the merge
# fail), so they are either removed (--clean) or an error.
shopt -s nullglob
old=("$parts"/shard-*-of-*.json)
shopt -u nullglob
if [[ ${#old[@]} -gt 0 ]]; then
    if [[ $clean == true ]]; then
        echo "removing ${#old[@]} old slice file(s) from $parts"
        rm -f -- "${old[@]}"
    else
        die "$parts already holds ${#old[@]} shard-*-of-*.json file(s) from an earlier run: pass --clean to delete them, or use another --parts folder"
    fi
fi

array="1-$shards${max_running:+%$max_running}"
export_env="ALL,TWIN=$twin"

array_out=$(sbatch --parsable --export="$export_env" --array="$array" \
    --job-name="twin-$1" --output="$logs/twin-$1-%A_%a.out" \
    "${sbatch_args[@]}" "$here/twin-array.sbatch" "$parts" "$@")
array_id=${array_out%%;*}
[[ $array_id =~ ^[0-9]+$ ]] || die "could not read the array job id from sbatch's output: '$array_out'"
echo "submitted array job $array_id ($shards tasks): $twin $* --shard I/$shards --out $parts"

# The merge waits for every array task to succeed; if one fails, Slurm cancels
# it instead of leaving it pending forever.
if ! merge_out=$(sbatch --parsable --export="$export_env" \
    --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
    --job-name=twin-merge --output="$logs/twin-merge-%j.out" \
    "${sbatch_args[@]}" "$here/twin-merge.sbatch" "$parts" "$out"); then
    echo "submit.sh: submitting the merge job failed; cancelling array job $array_id" >&2
    scancel "$array_id" || true
    exit 1
fi
merge_id=${merge_out%%;*}
echo "submitted merge job $merge_id (after array job $array_id succeeds): $twin merge $parts --out $out"
echo "logs: $logs"
echo "array_job_id=$array_id"
echo "merge_job_id=$merge_id"
