#!/usr/bin/env bash
# Installs the SageMaker HyperPod CLI (`hyp`, PyPI sagemaker-hyperpod at the version pinned below) into a venv of its own,
# once per machine: cached outside the repository beside the kube binaries (sandbox/kube/build.sh), keyed by the version,
# so an empty HOME (CI) does not install it again. Its dependencies (kubernetes, boto3, pydantic, ...) are not the
# collection's, so it never shares .venv. Prints the venv's directory. KUBE_CACHE_DIR overrides /var/cache/hyperpod-tenancy.
set -euo pipefail
version=3.12.0
cache="${KUBE_CACHE_DIR:-/var/cache/hyperpod-tenancy}"
dir="$cache/hyp-cli-$version"
mkdir -p "$cache"
# One install at a time per machine: pytest's workers may each ask for it at start.
exec 9>"$cache/hyp-cli.lock"
flock 9
if [ ! -e "$dir/.installed" ]; then
  echo "installing sagemaker-hyperpod $version into $dir (once per machine)" >&2
  rm -rf "$dir"  # an install cut short: again, from the start
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "sagemaker-hyperpod==$version" >&2
  "$dir/bin/hyp" --help >/dev/null
  touch "$dir/.installed"
fi
echo "$dir"
