#!/usr/bin/env bash
# Installs the system packages the test suite needs, with apt-get, only when one is missing.
# Safe to re-run. Needs root (CI and these machines run as root) or sudo.
set -euo pipefail

# command -> Debian package
declare -A needed=(
  [openssl]=openssl   # test CA and certificates for the Kubernetes API test server
)

missing=()
for cmd in "${!needed[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${needed[$cmd]}")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-test-deps: all system packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-test-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
