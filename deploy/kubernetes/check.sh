#!/usr/bin/env bash
# Validates every Kubernetes manifest in deploy/kubernetes offline, against
# the Kubernetes OpenAPI schemas bundled in the PyPI package
# kubernetes-validate (pinned in requirements.txt, installed into
# deploy/kubernetes/.venv; only PyPI is reached, and only when the venv is
# missing or the pins changed).
#
# Usage: deploy/kubernetes/check.sh
# Environment: K8S_VERSIONS  Kubernetes versions to validate against
#                            (default "1.30.0 1.37.0": an older one still in
#                            use and the newest the package bundles)
#              PYTHON        Python 3 for the venv (default python3)
#
# Three parts, any failure exits non-zero:
#   1. a self-test: broken copies of the manifests (an unknown field, a wrong
#      type, a missing required field, an unknown kind) must each be rejected,
#      so the validator cannot silently pass everything;
#   2. every manifest, in strict mode (unknown fields are errors), for each
#      version: every document must be reported as passed, with no warning;
#   3. the manifests agree with each other: the Indexed Job's SHARDS equals
#      its completions and its command adds --shard and --out /parts, the
#      merge runs `twin merge /parts --out /results`, every claimName is a
#      PVC of twin-pvc.yaml, and every pod uses the same image.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
versions=${K8S_VERSIONS:-1.30.0 1.37.0}
venv=$here/.venv
python=${PYTHON:-python3}

# ------------------------------------------------------------ the validator
stamp=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -x $venv/bin/kubernetes-validate || $(cat "$venv/.requirements.sha256" 2>/dev/null) != "$stamp" ]]; then
    echo "== installing the pinned validator into $venv"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r requirements.txt
    "$venv/bin/pip" check --disable-pip-version-check >/dev/null
    echo "$stamp" >"$venv/.requirements.sha256"
fi
validator=$venv/bin/kubernetes-validate
echo "== kubernetes-validate $("$validator" --version 2>&1 | head -n 1)"

shopt -s nullglob
manifests=(*.yaml)
shopt -u nullglob
[[ ${#manifests[@]} -gt 0 ]] || {
    echo "no manifests in $here" >&2
    exit 1
}

# validate VERSION FILE... : strict validation; succeeds only if the validator
# exits 0, prints no WARN, ERROR or FATAL line, and reports as many passed
# resources as the files have documents.
validate() {
    local version=$1 out docs passed
    shift
    out=$("$validator" --strict --kubernetes-version "$version" "$@" 2>&1) || {
        echo "$out"
        return 1
    }
    echo "$out"
    if grep -Eq '^(WARN|ERROR|FATAL)' <<<"$out"; then
        return 1
    fi
    docs=$("$venv/bin/python" -c '
import sys, yaml
print(sum(1 for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d is not None))
' "$@") || return 1
    passed=$(grep -c ' passed for resource ' <<<"$out" || true)
    if [[ $passed -ne $docs ]]; then
        echo "only $passed of $docs resources reported as passed"
        return 1
    fi
}

# consistent FILE... : the cross-manifest checks (part 3).
consistent() {
    "$venv/bin/python" - "$@" <<'PY'
import sys
import yaml

docs = {}
for f in sys.argv[1:]:
    for d in yaml.safe_load_all(open(f)):
        if d:
            docs[(d["kind"], d["metadata"]["name"])] = (f, d)
errors = []

def pod_spec(d):
    return d["spec"]["template"]["spec"] if d["kind"] == "Job" else d["spec"]

pvcs = {name for (kind, name) in docs if kind == "PersistentVolumeClaim"}
images = set()
for (kind, name), (f, d) in docs.items():
    if kind not in ("Job", "Pod"):
        continue
    spec = pod_spec(d)
    for c in spec["containers"]:
        images.add(c["image"])
    for v in spec.get("volumes", []):
        claim = v.get("persistentVolumeClaim", {}).get("claimName")
        if claim is not None and claim not in pvcs:
            errors.append(f"{f}: volume {v['name']} claims {claim!r}, not a PVC of the manifests ({sorted(pvcs)})")

if len(images) != 1:
    errors.append(f"the pods use different images: {sorted(images)}")

sweep = docs.get(("Job", "twin-sweep"))
if sweep is None:
    errors.append("no Job twin-sweep")
else:
    f, d = sweep
    spec = d["spec"]
    c = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    script = " ".join(c.get("command", []) + c.get("args", []))
    if spec.get("completionMode") != "Indexed":
        errors.append(f"{f}: completionMode is not Indexed")
    if env.get("SHARDS") != str(spec.get("completions")):
        errors.append(f"{f}: env SHARDS={env.get('SHARDS')!r} but completions={spec.get('completions')}: they must be equal")
    if spec.get("parallelism", 1) > spec.get("completions", 1):
        errors.append(f"{f}: parallelism is more than completions")
    for needed in ("$((JOB_COMPLETION_INDEX + 1))/${SHARDS}", "--shard", "--out /parts"):
        if needed not in script:
            errors.append(f"{f}: the command lacks {needed!r}")
    if not any(m["mountPath"] == "/parts" for m in c.get("volumeMounts", [])):
        errors.append(f"{f}: nothing mounted at /parts")

merge = docs.get(("Job", "twin-merge"))
if merge is None:
    errors.append("no Job twin-merge")
else:
    f, d = merge
    c = d["spec"]["template"]["spec"]["containers"][0]
    if c.get("command", []) + c.get("args", []) != ["twin", "merge", "/parts", "--out", "/results"]:
        errors.append(f"{f}: the command is not `twin merge /parts --out /results`")
    mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
    for p in ("/parts", "/results"):
        if p not in mounts:
            errors.append(f"{f}: nothing mounted at {p}")

for e in errors:
    print("  " + e)
if errors:
    sys.exit(1)
print(f"  {len(docs)} resources, image {images.pop()}, SHARDS = completions = {sweep[1]['spec']['completions']}")
PY
}

# ------------------------------------------------------------ 1. self-test
newest=${versions##* }
echo "== self-test: the validator must reject broken manifests (Kubernetes $newest)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# name|file|sed expression that breaks it
cases=(
    "unknown field|twin-sweep-job.yaml|s/^  completionMode: Indexed/  completionMod: Indexed/"
    "wrong type|twin-sweep-job.yaml|s/^  parallelism: .*/  parallelism: three/"
    "missing required field|twin-merge-job.yaml|s/^        - name: twin\$/        - nme: twin/"
    "unknown kind|twin-pvc.yaml|0,/^kind: PersistentVolumeClaim/s//kind: PersistentVolumeClam/"
)
for c in "${cases[@]}"; do
    IFS='|' read -r name file expr <<<"$c"
    sed "$expr" "$file" >"$tmp/$file"
    if cmp -s "$file" "$tmp/$file"; then
        echo "self-test '$name': the edit did not change $file (update check.sh)" >&2
        exit 1
    fi
    if validate "$newest" "$tmp/$file" >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        echo "FAIL: self-test '$name': the validator accepted a broken $file" >&2
        exit 1
    fi
    echo "rejected as expected ($name): $(grep -E '^(WARN|ERROR|FATAL)|only ' "$tmp/out" | head -n 1)"
done

echo "== self-test: the consistency check must reject SHARDS != completions"
for f in "${manifests[@]}"; do
    if [[ $f == twin-sweep-job.yaml ]]; then
        sed 's/^  completions: .*/  completions: 99/' "$f" >"$tmp/$f"
    else
        cp "$f" "$tmp/$f"
    fi
done
if (cd "$tmp" && consistent "${manifests[@]}") >"$tmp/out" 2>&1; then
    cat "$tmp/out"
    echo "FAIL: self-test: the consistency check accepted SHARDS != completions" >&2
    exit 1
fi
echo "rejected as expected:$(grep -m1 SHARDS "$tmp/out")"

# ------------------------------------------------------------ 2. the manifests
for v in $versions; do
    echo "== strict validation against Kubernetes $v: ${manifests[*]}"
    if ! validate "$v" "${manifests[@]}"; then
        echo "FAIL: the manifests do not validate against Kubernetes $v" >&2
        exit 1
    fi
done

# ------------------------------------------------------------ 3. consistency
echo "== the manifests agree with each other"
consistent "${manifests[@]}"

echo "PASS: ${#manifests[@]} manifests valid (strict) against Kubernetes $versions, self-test and consistency checks passed"
