#!/usr/bin/env bash
# `npm start`: runs the pull secret job on the embedded defaults (local encrypted store, no cloud
# account), three times, and shows what happened:
#   1. first run           -> the secret is created with version 1
#   2. same data again     -> unchanged, no new version
#   3. changed data        -> updated, version 2
# each run also writes the cluster's Kubernetes Secret as a manifest (no cluster needed), then
# prints the stored secret's metadata with `pull-secret inspect` and the manifest's metadata.
# Every command is echoed exactly as run (the CLI is `node dist/cli/main.js` from this checkout,
# with the demo's store directory), so it can be copied and run again.
set -euo pipefail
cd "$(dirname "$0")/.."

export LOCAL_STORE_DIR="${LOCAL_STORE_DIR:-.pull-secret/demo-store}"
export CLUSTER_ID="${CLUSTER_ID:-019466a0-8f8e-7abc-9def-0123456789ab}"
export RESULTS_PATH="${RESULTS_PATH:-.pull-secret/demo-result.json}"
export KUBERNETES_TARGET="${KUBERNETES_TARGET:-manifests}"
export MANIFEST_DIR="${MANIFEST_DIR:-.pull-secret/demo-manifests}"
rm -rf "$LOCAL_STORE_DIR" "$MANIFEST_DIR" && mkdir -p "$(dirname "$RESULTS_PATH")"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# PULL_SECRET_CLI lets tests run the CLI from source; users get the build.
read -r -a pull_secret_cli <<< "${PULL_SECRET_CLI:-node dist/cli/main.js}"
cli() { "${pull_secret_cli[@]}" "$@"; }
shown="${pull_secret_cli[*]}"

summary() { sed -n 's/.*"operation":"completed".*"outcome":"\([a-z]*\)".*"kubernetes_outcome":"\([a-z]*\)".*/  => secret store: \1, Kubernetes Secret: \2/p'; }

run() {
  echo
  echo "\$ PULL_SECRET_DATA=\"\$(cat $1)\" $shown run-job pull-secret   # $2"
  PULL_SECRET_DATA="$(cat "$1")" cli run-job pull-secret | tee "$scratch/run.log"
  summary < "$scratch/run.log"
}

changed="$scratch/changed.json"
sed 's/"email":"test@example.com"}}}$/"email":"ops@example.com"}}}/' examples/pull-secret.json > "$changed"

echo "Pull secret job on the embedded defaults: local encrypted store in $LOCAL_STORE_DIR,"
echo "Kubernetes Secret manifests in $MANIFEST_DIR, cluster $CLUSTER_ID. The commands below run with:"
echo "\$ export LOCAL_STORE_DIR=$LOCAL_STORE_DIR CLUSTER_ID=$CLUSTER_ID RESULTS_PATH=$RESULTS_PATH KUBERNETES_TARGET=$KUBERNETES_TARGET MANIFEST_DIR=$MANIFEST_DIR"
run examples/pull-secret.json "first run: creates the secret"
run examples/pull-secret.json "same data: no new version"
run "$changed" "changed data: a second version"

echo
echo "\$ $shown inspect --cluster-id $CLUSTER_ID"
cli inspect --cluster-id "$CLUSTER_ID"
manifest="$MANIFEST_DIR/clusters-$CLUSTER_ID/$CLUSTER_ID-pull-secret.yaml"
echo
echo "Kubernetes Secret manifest ($manifest, mode $(stat -c %a "$manifest"); apply it with kubectl apply -f), without its data:"
sed '/^data:/,/^[a-z]/{/^data:/d;/^  /d}' "$manifest"
echo
echo "Result file for a status reporter ($RESULTS_PATH):"
cat "$RESULTS_PATH"
echo
echo "Try it yourself: ${pull_secret_cli[*]} run-job pull-secret --help"
echo "Look at the demo's store again: LOCAL_STORE_DIR=$LOCAL_STORE_DIR $shown inspect --cluster-id $CLUSTER_ID"
