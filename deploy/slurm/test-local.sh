#!/usr/bin/env bash
# End-to-end test of deploy/slurm on this one machine: a real one-node Slurm
# cluster on localhost runs a small twin sweep as a job array of 3 slices plus
# the merge job (through submit.sh), and the merged results must equal, file
# for file and byte for byte, the same sweep run directly without --shard.
#
# Usage: deploy/slurm/test-local.sh          (as root; Debian 12 or similar)
#
# It installs Slurm and MUNGE from Debian's packages if they are missing,
# starts a private munged and the Slurm daemons (slurmctld, slurmd) by hand
# (no systemd), with their configuration, state and logs under TWIN_SLURM_STATE, and
# stops them on exit. Safe to run again: each run starts from a clean state
# folder and first stops daemons an earlier, interrupted run left behind.
#
# Environment (all optional):
#   TWIN                 twin binary to test (default: cargo build --release,
#                        then target/release/twin)
#   TWIN_SLURM_STATE     state folder (default /tmp/twin-slurm-test); the last
#                        run's results and job logs stay in its work/ folder
#   TWIN_SLURM_PORTS     slurmctld and slurmd ports (default "16817 16818"),
#                        away from a real Slurm's 6817/6818
#   TWIN_SLURM_TIMEOUT   seconds to wait for the jobs (default 600)
# Exit status: 0 PASS, 1 FAIL (or a step failed), 2 usage/setup error.
set -euo pipefail

# The daemons live in /usr/sbin, which a non-login root shell may not have on PATH.
export PATH=$PATH:/usr/sbin:/sbin
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

state=${TWIN_SLURM_STATE:-/tmp/twin-slurm-test}
read -r ctld_port slurmd_port <<<"${TWIN_SLURM_PORTS:-16817 16818}"
timeout=${TWIN_SLURM_TIMEOUT:-600}
shards=3
# The sweep under test: the quickstart scenario (60 s simulated) on 3, 4 and 5
# nodes, so 3 runs of a few seconds each; one run per slice.
sweep=(sweep scenarios/quickstart.toml --set 'cluster.nodes=3,4,5')

started=$SECONDS
step() { printf '\n== [%3ds] %s\n' "$((SECONDS - started))" "$*"; }
die() {
    echo "test-local.sh: $*" >&2
    exit 2
}

[[ $(id -u) -eq 0 ]] || die "run as root: it installs packages and starts the Slurm daemons"
[[ -n $state && $state != / ]] || die "TWIN_SLURM_STATE must be a folder of its own"
[[ $ctld_port =~ ^[0-9]+$ && $slurmd_port =~ ^[0-9]+$ ]] || die "TWIN_SLURM_PORTS must be two port numbers"

# ---------------------------------------------------------------- packages
step "Slurm and MUNGE from Debian's packages"
missing=()
for pair in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "installing: ${missing[*]}"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    echo "already installed"
fi
slurmctld -V

# ---------------------------------------------------------------- twin
if [[ -n ${TWIN:-} ]]; then
    step "twin binary from TWIN"
    twin=$(cd "$(dirname "$TWIN")" && pwd)/$(basename "$TWIN")
else
    step "building twin (cargo build --release)"
    cargo build --release
    twin=$repo/target/release/twin
fi
echo "$twin"
[[ -x $twin ]] || die "no twin binary at $twin"
sweep_help=$("$twin" sweep --help)
[[ $sweep_help == *--shard* ]] || die "$twin sweep has no --shard option: build a twin that has it"
"$twin" merge --help >/dev/null || die "$twin has no merge command: build a twin that has it"

# ---------------------------------------------------------------- daemons
# Stop daemons that an earlier run of this script left running (their pid
# files are in our state folder, so they are ours), then start afresh.
stop_pidfile() { # PIDFILE NAME
    local pid
    [[ -s $1 ]] || return 0
    pid=$(<"$1")
    if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
        && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]]; then
        echo "stopping $2 (pid $pid)"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$1"
}

stop_all() {
    # Jobs still queued on our test cluster (never any other: the
    # configuration is named explicitly, and only while our slurmctld runs).
    local conf=$state/slurm.conf
    if [[ -f $conf && -s $state/slurmctld.pid ]] && kill -0 "$(<"$state/slurmctld.pid")" 2>/dev/null \
        && [[ -n $(SLURM_CONF=$conf squeue -h -o %i 2>/dev/null) ]]; then
        echo "cancelling the jobs still queued"
        SLURM_CONF=$conf scancel --quiet --full --user=root 2>/dev/null || true
        sleep 2
    fi
    stop_pidfile "$state/slurmd.pid" slurmd
    stop_pidfile "$state/slurmctld.pid" slurmctld
    stop_pidfile "$state/munge/munged.pid" munged
}

step "stopping what an earlier run left, clean state in $state"
stop_all
rm -rf -- "$state"
mkdir -p "$state"/{munge,ctld,spool,log,work}

on_exit() {
    local rc=$?
    trap - EXIT
    step "stopping the daemons this test started"
    stop_all
    echo "state, logs and results: $state"
    exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

step "munged with a new key (private socket in $state/munge)"
# munged wants its socket folder world-searchable and its key private.
chmod 755 "$state/munge"
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
socket=$state/munge/munge.socket
munged --socket="$socket" --key-file="$state/munge/munge.key" \
    --pid-file="$state/munge/munged.pid" --seed-file="$state/munge/munged.seed" \
    --log-file="$state/log/munged.log"
munge -n -S "$socket" | unmunge -S "$socket" >/dev/null
echo "munge credential round trip OK"

step "slurm.conf for a one-node cluster on localhost"
host=$(hostname -s 2>/dev/null || uname -n)
host=${host%%.*}
cpus=$(nproc)
export SLURM_CONF=$state/slurm.conf
cat >"$SLURM_CONF" <<CONF
# One-node test cluster written by deploy/slurm/test-local.sh.
ClusterName=twintest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
# No cgroups, no accounting: plain process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# Finished jobs stay visible to scontrol for 10 minutes.
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=twin Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
sed 's/^/    /' "$SLURM_CONF"

step "starting slurmctld and slurmd"
slurmctld -D -i >"$state/log/slurmctld.out" 2>&1 &
ctld_pid=$!
echo "$ctld_pid" >"$state/slurmctld.pid"
slurmd -D -N "$host" >"$state/log/slurmd.out" 2>&1 &
slurmd_pid=$!
echo "$slurmd_pid" >"$state/slurmd.pid"
echo "slurmctld pid $ctld_pid, slurmd pid $slurmd_pid"

step "waiting for node $host to be idle"
node_state=""
for _ in $(seq 60); do
    for pid in "$ctld_pid" "$slurmd_pid"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 30 "$state"/log/slurm*.out "$state"/log/slurm*.log 2>/dev/null || true
            die "a Slurm daemon (pid $pid) exited; its logs are above"
        fi
    done
    node_state=$(sinfo -h -N -n "$host" -o %t 2>/dev/null || true)
    [[ $node_state == idle ]] && break
    sleep 1
done
sinfo
[[ $node_state == idle ]] || die "node $host is '$node_state', not idle, after 60 s (logs in $state/log)"

# ---------------------------------------------------------------- the test
work=$state/work
step "one machine: twin ${sweep[*]} --out $work/one"
t0=$SECONDS
"$twin" "${sweep[@]}" --out "$work/one"
echo "took $((SECONDS - t0)) s"

# One CPU per task, so twin-array.sbatch also adds --jobs 1 to each slice.
step "Slurm: submit.sh --shards $shards --sbatch-arg=--cpus-per-task=1 ... -- ${sweep[*]}"
t0=$SECONDS
submit_out=$("$repo/deploy/slurm/submit.sh" --shards "$shards" --parts "$work/parts" \
    --out "$work/merged" --logs "$work/logs" --twin "$twin" \
    --sbatch-arg=--cpus-per-task=1 -- "${sweep[@]}")
echo "$submit_out"
array_id=$(sed -n 's/^array_job_id=//p' <<<"$submit_out")
merge_id=$(sed -n 's/^merge_job_id=//p' <<<"$submit_out")
[[ -n $array_id && -n $merge_id ]] || die "submit.sh printed no job ids"

step "waiting for merge job $merge_id (timeout ${timeout} s)"
job_state() { # JOBID -> JobState of each of its jobs (array tasks), one a line
    { scontrol show job -o "$1" 2>/dev/null || true; } | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true
}
last="" merge_state=""
while :; do
    merge_state=$(job_state "$merge_id")
    now="array: $(job_state "$array_id" | sort | uniq -c | xargs) | merge: $merge_state"
    [[ $now != "$last" ]] && printf '[%3ds] %s\n' "$((SECONDS - t0))" "$now"
    last=$now
    case $merge_state in
    PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | "") ;;
    *) break ;;
    esac
    if ((SECONDS - t0 > timeout)); then
        echo "timed out"
        break
    fi
    sleep 2
done
echo "took $((SECONDS - t0)) s"

failed=false
for f in "$work"/logs/*.out; do
    echo "--- $f"
    cat "$f"
done
if [[ $merge_state != COMPLETED ]]; then
    echo "merge job $merge_id ended $merge_state"
    scontrol show job "$array_id" 2>/dev/null | grep -E 'JobId|JobState|ExitCode' || true
    failed=true
fi

step "comparing $work/merged with $work/one"
if [[ $failed == true ]]; then
    echo "skipped: the jobs did not all succeed"
else
    list_one=$(cd "$work/one" && find . -type f | sort)
    list_merged=""
    [[ -d $work/merged ]] && list_merged=$(cd "$work/merged" && find . -type f | sort)
    if [[ $list_one != "$list_merged" ]]; then
        echo "the file lists differ (< one machine, > merged):"
        diff <(echo "$list_one") <(echo "$list_merged") || true
        failed=true
    fi
    n=0
    while read -r f; do
        [[ -n $f ]] || continue
        n=$((n + 1))
        if [[ -f $work/merged/$f ]] && ! cmp -s "$work/one/$f" "$work/merged/$f"; then
            echo "differs: ${f#./}"
            failed=true
        fi
    done <<<"$list_one"
    echo "$n files compared"
    [[ $n -gt 0 ]] || { echo "the one-machine run wrote no files"; failed=true; }
fi

if [[ $failed == true ]]; then
    echo "FAIL: Slurm array + merge did not reproduce the one-machine sweep ($((SECONDS - started)) s)"
    exit 1
fi
echo "PASS: Slurm array of $shards + merge reproduced the one-machine sweep byte for byte ($((SECONDS - started)) s)"
