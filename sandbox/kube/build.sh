#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from their Go modules at the release pinned in apiserver/go.mod,
# once per machine: the binaries are cached outside the repository, keyed by that release, with
# a Go module cache of their own, so an empty HOME (CI) neither downloads nor builds again.
# Prints the directory that holds the binaries. KUBE_CACHE_DIR overrides /var/cache/hyperpod-tenancy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module="$here/apiserver"
version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$module/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$module/go.mod")
dir="${KUBE_CACHE_DIR:-/var/cache/hyperpod-tenancy}/kube-$version-etcd-$etcd_version"
go_bin=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
minor=${version#v1.}; minor=${minor%%.*}
version_flags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1"
version_flags+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

build() {  # build NAME PACKAGE [LDFLAGS]: only when the binary is missing
  local name=$1 package=$2 ldflags=${3:-}
  [ -x "$dir/bin/$name" ] && return
  echo "building $name ($package, kubernetes $version, etcd $etcd_version) into $dir (once per machine)" >&2
  mkdir -p "$dir/bin" "$dir/src"
  cp "$module/go.mod" "$module/go.sum" "$module/tools.go" "$dir/src/"
  (
    cd "$dir/src"
    export GOMODCACHE="$dir/gomodcache" GOCACHE="$dir/gocache" GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0
    nice -n 10 "$go_bin" build -trimpath -ldflags="-s -w $ldflags" -o "$dir/bin/$name.tmp" "$package"
  )
  mv "$dir/bin/$name.tmp" "$dir/bin/$name"
}

build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$version_flags"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$version_flags"
# The build cache serves only a rebuild; the module cache stays so that one needs no network.
rm -rf "$dir/gocache"
echo "$dir/bin"
