#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from their Go modules at the release pinned in apiserver/go.mod,
# and sig-network's NetworkPolicy enforcer kube-network-policies at the version netpol/go.mod pins (netpol/main.go, with
# netpol/nfqueue-xt-target.patch), once per machine: the binaries are cached outside the repository, keyed by those
# versions, with a Go module cache of their own, so an empty HOME (CI) neither downloads nor builds again.
# Prints the directory that holds the binaries. KUBE_CACHE_DIR overrides /var/cache/hyperpod-tenancy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module="$here/apiserver"
version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$module/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$module/go.mod")
cache="${KUBE_CACHE_DIR:-/var/cache/hyperpod-tenancy}"
dir="$cache/kube-$version-etcd-$etcd_version"
# One build at a time per machine: pytest's workers each ask for the binaries at start, and two builds of one
# binary race on its .tmp file. A second caller waits here, then finds the binaries built.
mkdir -p "$cache"
exec 9>"$cache/build.lock"
flock 9
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

# The enforcer, in a directory of its own keyed by its version and by what of it is ours (main.go, the patch).
# The patch makes it queue packets with the xtables NFQUEUE target (through nft_compat) instead of nftables' queue
# expression, which this machine's kernel lacks (`nft add rule ... queue num 100`: "No such file or directory").
netpol="$here/netpol"
netpol_version=$(awk '$1 == "sigs.k8s.io/kube-network-policies" {print $2}' "$netpol/go.mod")
netpol_hash=$(cat "$netpol"/go.mod "$netpol"/go.sum "$netpol"/main.go "$netpol"/*.patch | sha256sum | cut -c1-12)
netpol_dir="$cache/kube-network-policies-$netpol_version-$netpol_hash"
if [ ! -x "$netpol_dir/bin/kube-network-policies" ]; then
  echo "building kube-network-policies $netpol_version into $netpol_dir (once per machine)" >&2
  rm -rf "$netpol_dir/src"
  mkdir -p "$netpol_dir/bin" "$netpol_dir/src"
  cp "$netpol"/go.mod "$netpol"/go.sum "$netpol"/main.go "$netpol_dir/src/"
  (
    cd "$netpol_dir/src"
    export GOMODCACHE="$netpol_dir/gomodcache" GOCACHE="$netpol_dir/gocache" GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0
    upstream=$("$go_bin" mod download -json "sigs.k8s.io/kube-network-policies@$netpol_version" | awk -F'"' '$2 == "Dir" {print $4}')
    cp -r "$upstream" kube-network-policies
    chmod -R u+w kube-network-policies
    patch -s -p1 -d kube-network-policies < "$netpol/nfqueue-xt-target.patch"
    "$go_bin" mod edit -replace sigs.k8s.io/kube-network-policies=./kube-network-policies
    nice -n 10 "$go_bin" build -trimpath -ldflags="-s -w" -o "$netpol_dir/bin/kube-network-policies.tmp" .
  )
  mv "$netpol_dir/bin/kube-network-policies.tmp" "$netpol_dir/bin/kube-network-policies"
  rm -rf "$netpol_dir/gocache"
fi
# One directory holds every binary the sandbox runs (sandbox.kube.binary_dir).
ln -sfn "$netpol_dir/bin/kube-network-policies" "$dir/bin/kube-network-policies"
echo "$dir/bin"
