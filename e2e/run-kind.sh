#!/usr/bin/env bash
# The end-to-end suite on a real cluster: kind + Volcano + LeaderWorkerSet + topobridge.
#
#   e2e/run-kind.sh             run it (needs Docker, kind and kubectl; Python deps from `make venv`)
#   e2e/run-kind.sh --dry-run   print every step and every manifest of ours it would apply; run nothing
#   e2e/run-kind.sh --keep      leave the cluster up afterwards (default: delete it)
#
# Steps: build topobridge's image from this checkout; create a kind cluster and load the
# image; install KWOK (the scenarios' 12 nodes are KWOK nodes with the capacity the seed
# gives them); install a pinned Volcano with network-topology-aware scheduling on; install
# LeaderWorkerSet with Volcano as its gang provider and spec.networkTopology in its CRD;
# install topobridge from deploy/topobridge; then run e2e/scenarios/*.yaml twice:
#   kind-volcano   Volcano schedules (LWS hard tier 1 inside one HyperNode; a Koordinator
#                  PodGroup translated by topobridge and scheduled by Volcano);
#   kind-fallback  Volcano removed: topobridge's fallback places the same gangs, and runs the
#                  seed's preemption examples.
# Versions are pinned below; override them through the environment.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

KIND_CLUSTER="${KIND_CLUSTER:-topobridge-e2e}"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-kindest/node:v1.32.2}"
VOLCANO_VERSION="${VOLCANO_VERSION:-1.12.4}"
LWS_VERSION="${LWS_VERSION:-v0.7.0}"
KWOK_VERSION="${KWOK_VERSION:-v0.7.0}"
IMAGE="${IMAGE:-topobridge:e2e}"
PYTHON="${PYTHON:-.venv/bin/python}"

LWS_MANIFESTS="https://github.com/kubernetes-sigs/lws/releases/download/${LWS_VERSION}/manifests.yaml"
KWOK_BASE="https://github.com/kubernetes-sigs/kwok/releases/download/${KWOK_VERSION}"

DRY_RUN=0
KEEP=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run-kind.sh: unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done

if [[ $DRY_RUN -eq 1 ]]; then
  WORK="${WORK:-/tmp/topobridge-kind-dry-run}"
else
  WORK="${WORK:-$(mktemp -d -t topobridge-kind-XXXXXX)}"
fi
KUBECONFIG_FILE="$WORK/kubeconfig"

STEP=0
step() { STEP=$((STEP + 1)); printf '\n==> [%d] %s\n' "$STEP" "$*"; }
# Print a command; run it unless this is a dry run.
run() {
  printf '+ %s\n' "$*"
  if [[ $DRY_RUN -eq 0 ]]; then "$@"; fi
}
kc() { run kubectl --kubeconfig "$KUBECONFIG_FILE" "$@"; }
py() { run "$PYTHON" -m e2e.kindsuite "$@"; }

cleanup() {
  local rc=$?
  if [[ $DRY_RUN -eq 0 && $KEEP -eq 0 ]]; then
    kind delete cluster --name "$KIND_CLUSTER" >/dev/null 2>&1 || true
  fi
  if [[ $DRY_RUN -eq 0 && $rc -ne 0 ]]; then
    echo "run-kind.sh: failed (exit $rc); rerun with --keep to inspect the cluster" >&2
  fi
}
trap cleanup EXIT

step "prerequisites: docker, kind, kubectl, and the project's Python environment"
echo "versions: kind node ${KIND_NODE_IMAGE}, Volcano ${VOLCANO_VERSION}, LWS ${LWS_VERSION}, KWOK ${KWOK_VERSION}"
missing=()
for tool in docker kind kubectl; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [[ ! -x "$PYTHON" ]]; then missing+=("$PYTHON (run: make venv)"); fi
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $DRY_RUN -eq 1 ]]; then
    echo "(not found, fine for a dry run: ${missing[*]})"
  else
    echo "run-kind.sh: missing: ${missing[*]}" >&2
    exit 1
  fi
fi

step "build topobridge's image from this checkout"
run docker build -t "$IMAGE" .

step "create the kind cluster ${KIND_CLUSTER}"
run kind create cluster --name "$KIND_CLUSTER" --image "$KIND_NODE_IMAGE" --config e2e/kind/cluster.yaml \
  --kubeconfig "$KUBECONFIG_FILE" --wait 120s
run kind load docker-image "$IMAGE" --name "$KIND_CLUSTER"

step "install KWOK ${KWOK_VERSION}: the scenarios' nodes are KWOK nodes (Ready, pods Running)"
kc apply -f "${KWOK_BASE}/kwok.yaml"
kc apply -f "${KWOK_BASE}/stage-fast.yaml"
kc -n kube-system rollout status deployment/kwok-controller --timeout=180s
# DaemonSets tolerate every taint: keep kindnet and kube-proxy off the KWOK nodes (label
# type=kwok), or their requests would eat into the whole-node capacity the scenarios count on.
for ds in kindnet kube-proxy; do
  kc -n kube-system patch daemonset "$ds" --type=merge -p \
    '{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"type","operator":"NotIn","values":["kwok"]}]}]}}}}}}}'
done

step "install Volcano ${VOLCANO_VERSION} with network-topology-aware scheduling (HyperNodes)"
py install-volcano --kubeconfig "$KUBECONFIG_FILE" --version "$VOLCANO_VERSION"
kc apply -f e2e/kind/volcano-scheduler.yaml
kc -n volcano-system rollout restart deployment/volcano-scheduler
kc -n volcano-system rollout status deployment/volcano-scheduler --timeout=180s

step "install LeaderWorkerSet ${LWS_VERSION} with Volcano as its gang-scheduling provider"
kc apply --server-side -f "$LWS_MANIFESTS"
kc -n lws-system rollout status deployment/lws-controller-manager --timeout=180s
kc apply -f e2e/kind/lws-volcano.yaml
# Upstream's CRD has no spec.networkTopology (the API server would prune it): add topobridge's.
if [[ $DRY_RUN -eq 1 ]]; then
  echo "+ kubectl --kubeconfig $KUBECONFIG_FILE patch crd leaderworkersets.leaderworkerset.x-k8s.io --type=json -p \"\$($PYTHON -m e2e.kindsuite lws-crd-patch)\""
  "$PYTHON" -m e2e.kindsuite lws-crd-patch
else
  kc patch crd leaderworkersets.leaderworkerset.x-k8s.io --type=json -p "$("$PYTHON" -m e2e.kindsuite lws-crd-patch)"
fi
kc -n lws-system rollout restart deployment/lws-controller-manager
kc -n lws-system rollout status deployment/lws-controller-manager --timeout=180s

step "install topobridge from deploy/topobridge (values: e2e/kind/values.yaml)"
# The Koordinator and coscheduling CRDs have no chart of their own here; Volcano's and LWS's
# came with them, so the chart's crds.install stays off.
kc apply --server-side \
  -f deploy/topobridge/files/crds/scheduling.koordinator.sh_clusternetworktopologies.yaml \
  -f deploy/topobridge/files/crds/scheduling.sigs.k8s.io_podgroups.yaml \
  -f deploy/topobridge/files/crds/scheduling.x-k8s.io_podgroups.yaml
py install-topobridge --kubeconfig "$KUBECONFIG_FILE"
kc -n topobridge-system rollout status deployment/topobridge --timeout=180s

step "scenarios with Volcano scheduling (target kind-volcano)"
py scenarios --kubeconfig "$KUBECONFIG_FILE" --target kind-volcano

step "remove Volcano; put the PodGroup and HyperNode CRDs back if its chart took them"
py uninstall-volcano --kubeconfig "$KUBECONFIG_FILE"
kc apply --server-side --force-conflicts -f deploy/topobridge/files/crds/
kc wait --for=condition=Established --timeout=60s -f deploy/topobridge/files/crds/

step "the same scenarios, and the seed's preemption examples, with topobridge's fallback scheduler (target kind-fallback)"
py scenarios --kubeconfig "$KUBECONFIG_FILE" --target kind-fallback

if [[ $DRY_RUN -eq 1 ]]; then
  step "the manifests of ours this run applies (Volcano's, LWS's and KWOK's own come from their releases above)"
  echo "# kind cluster configuration (e2e/kind/cluster.yaml):"
  cat e2e/kind/cluster.yaml
  "$PYTHON" -m e2e.kindsuite manifests
  echo
  echo "dry run: nothing was run"
else
  step "done: both phases passed"
  if [[ $KEEP -eq 1 ]]; then echo "cluster kept: export KUBECONFIG=$KUBECONFIG_FILE"; fi
fi
