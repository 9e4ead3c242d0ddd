#!/usr/bin/env bash
# Installs the system packages the test suite needs, with apt-get, only when one is missing.
# Safe to re-run. Needs root (CI and these machines run as root) or sudo.
set -euo pipefail

# command -> Debian package
declare -A needed=(
  [openssl]=openssl                 # test CA and certificates for the Kubernetes API test server
  [rabbitmq-server]=rabbitmq-server # RabbitMQ broker tests start their own throwaway node (test/support/rabbitmq.ts)
  [java]=default-jre-headless       # runs the Google Pub/Sub emulator (test/support/pubsub-emulator.ts)
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
