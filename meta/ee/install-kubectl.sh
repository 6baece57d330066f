#!/bin/sh
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Installs kubectl into the execution environment (a build step of
# ../../execution-environment.yml): install-kubectl.sh VERSION SHA256_AMD64 SHA256_ARM64 DIR
# The binary comes from the Kubernetes release site and is installed only when
# its SHA-256 is the pinned one of this machine's architecture.
set -eu
if [ "$#" -ne 4 ]; then
  echo "usage: $0 VERSION SHA256_AMD64 SHA256_ARM64 DIR" >&2
  exit 2
fi
version=$1
dir=$4
case $(uname -m) in
  x86_64 | amd64) arch=amd64 sum=$2 ;;
  aarch64 | arm64) arch=arm64 sum=$3 ;;
  *)
    echo "install-kubectl: no pinned kubectl checksum for $(uname -m)" >&2
    exit 1
    ;;
esac
url="https://dl.k8s.io/release/$version/bin/linux/$arch/kubectl"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
curl -fsSL --retry 3 -o "$tmp" "$url"
if ! echo "$sum  $tmp" | sha256sum -c - >/dev/null 2>&1; then
  echo "install-kubectl: $url is not the pinned kubectl (SHA-256 $(sha256sum "$tmp" | cut -d' ' -f1), expected $sum)" >&2
  exit 1
fi
install -m 0755 "$tmp" "$dir/kubectl"
"$dir/kubectl" version --client
