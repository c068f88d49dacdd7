#!/usr/bin/env bash
# Build a real kube-apiserver (and friends) v1.20.2 from Debian bookworm's `kubernetes`
# source package, and install etcd from Debian's `etcd-server`.
#
# Idempotent: binaries are cached under ~/.cache/topobridge/k8s-v1.20.2/bin and a second
# run with everything present does nothing. No registry ships a prebuilt kube-apiserver
# for this environment, so building from the distribution's source package is the way.
#
# Usage: hack/install-control-plane.sh [--with-scheduler]
set -euo pipefail

VERSION=v1.20.2
CACHE="${TOPOBRIDGE_CACHE:-$HOME/.cache/topobridge}/k8s-$VERSION"
BIN="$CACHE/bin"
WANT=(kube-apiserver kube-controller-manager kubectl)
if [[ "${1:-}" == "--with-scheduler" ]]; then WANT+=(kube-scheduler); fi

say() { printf '[install-control-plane] %s\n' "$*" >&2; }
sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

# A binary's recipe number goes up when a source patch below changes it; a cached binary
# built by an older recipe (no stamp means 1) is rebuilt.
declare -A RECIPE=([kube-apiserver]=2 [kube-controller-manager]=1 [kubectl]=1 [kube-scheduler]=1)
current() { [[ -x "$BIN/$1" ]] && [[ "$(cat "$BIN/.$1.recipe" 2>/dev/null || echo 1)" == "${RECIPE[$1]}" ]]; }

missing=()
for b in "${WANT[@]}"; do current "$b" || missing+=("$b"); done
need_etcd=0
command -v etcd >/dev/null 2>&1 || need_etcd=1

if [[ ${#missing[@]} -eq 0 && $need_etcd -eq 0 ]]; then
  say "cached: ${WANT[*]} in $BIN; etcd at $(command -v etcd)"
  exit 0
fi

apt_updated=0
apt_update() { [[ $apt_updated -eq 1 ]] || { sudo_ apt-get update -qq; apt_updated=1; }; }

if [[ $need_etcd -eq 1 ]]; then
  say "installing etcd-server from Debian"
  apt_update
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
fi

if [[ ${#missing[@]} -eq 0 ]]; then exit 0; fi

# A deb-src entry for bookworm main on the mirror apt already uses.
SRC_LIST=/etc/apt/sources.list.d/topobridge-deb-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/debian.sources | grep -v security | head -n1 | awk '{print $2}')
  [[ -n "$mirror" ]] || mirror=$(grep -hs '^deb ' /etc/apt/sources.list | grep -v security | head -n1 | awk '{print $2}')
  [[ -n "$mirror" ]] || mirror=http://deb.debian.org/debian
  say "adding deb-src for bookworm main on $mirror"
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" | sudo_ tee "$SRC_LIST" >/dev/null
  apt_updated=0
fi
apt_update
say "installing the Go toolchain and build tools from Debian"
sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  golang-go make rsync golang-github-modern-go-reflect2-dev >/dev/null

SRC="$CACHE/src"
mkdir -p "$SRC" "$BIN"
cd "$SRC"
if ! ls kubernetes_*.orig.tar.gz >/dev/null 2>&1; then
  say "downloading the kubernetes source package"
  apt-get source --download-only kubernetes >/dev/null
fi
TREE="$SRC/tree"
if [[ ! -f "$TREE/.topobridge-prepared" ]]; then
  rm -rf "$TREE" && mkdir -p "$TREE"
  say "unpacking $(ls kubernetes_*.orig.tar.gz)"
  tar -xzf kubernetes_*.orig.tar.gz -C "$TREE" --strip-components=1
  # The vendored reflect2 1.0.1 crashes (SIGSEGV in runtime.mapiternext) on Go >= 1.18
  # at the first custom-object create; Debian's 1.0.2 is a drop-in replacement.
  R2="$TREE/vendor/github.com/modern-go/reflect2"
  rm -f "$R2"/*.go "$R2"/*.s
  for f in /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s; do
    [[ -e "$f" ]] || continue
    [[ "$f" == *_test.go ]] && continue
    cp "$f" "$R2/"
  done
  mkdir -p "$TREE/.go/src/k8s.io"
  ln -sfn ../../.. "$TREE/.go/src/k8s.io/kubernetes"
  touch "$TREE/.topobridge-prepared"
fi

# go-openapi's type validator (vendored twice) takes a value for null when
# reflect.DeepEqual(reflect.Zero(T), reflect.ValueOf(v)); since Go 1.19 an empty string in an
# interface and reflect.Zero(string) point at the same runtime zero buffer, so every "" inside a
# custom resource is refused as "must be of type string: null". Only nil is null.
for f in vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go vendor/github.com/go-openapi/validate/type.go; do
  sed -i 's/if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {/if data == nil {/' "$TREE/$f"
  if grep -q 'DeepEqual(reflect.Zero(reflect.TypeOf(data))' "$TREE/$f"; then say "could not patch $f"; exit 1; fi
done

cd "$TREE"
what=""
for b in "${missing[@]}"; do what+="cmd/$b "; done
say "building ${missing[*]} (several minutes on 2 cores)"
start=$(date +%s)
GOPATH="$TREE/.go" CGO_ENABLED=0 GOFLAGS=-buildvcs=false make WHAT="${what% }" >"$CACHE/build.log" 2>&1 || {
  tail -n 40 "$CACHE/build.log" >&2
  say "build failed; full log in $CACHE/build.log"
  exit 1
}
for b in "${missing[@]}"; do
  out=$(find "$TREE/_output" -type f -name "$b" -perm -u+x | head -n1)
  [[ -n "$out" ]] || { say "built, but $b not found under _output"; exit 1; }
  # Rename into place: a control plane starting meanwhile never sees a half-copied binary.
  install -m 0755 "$out" "$BIN/.$b.new" && mv -f "$BIN/.$b.new" "$BIN/$b"
  echo "${RECIPE[$b]}" >"$BIN/.$b.recipe"
done
say "built ${missing[*]} in $(( $(date +%s) - start ))s into $BIN"
