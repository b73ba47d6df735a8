#!/usr/bin/env bash
# The real node of `npm run dev-cluster -- up --node`: containerd, runc, a CNI bridge, kube-proxy and
# a kubelet, all inside one network namespace this script creates. The control plane (started by
# ctopo, in the machine's own network namespace) has made the certificates and kubeconfigs in
# $STATE/node before `up`.
#
#   tools/node/node.sh net STATE     # the network namespace and its link (before the API server)
#   tools/node/node.sh up STATE      # STATE: the dev cluster's state directory
#   tools/node/node.sh down STATE    # stops everything `up` started, unmounts what it mounted
#
# Network (nothing reaches beyond this machine):
#   node namespace "ctopo-node": veth ctopo-n 10.87.0.2/24 <-> ctopo-h 10.87.0.1/24 in the
#     machine's namespace (where the API server listens); bridge cni0 10.88.0.1/16 with the pods;
#     NO default route, so a pod's packet to any other address is dropped ("network unreachable").
#   the machine's namespace: only a route 10.88.0.0/16 via 10.87.0.2 (answers to pods); its
#     ip_forward stays as it was (0 here), so it forwards nothing for them; no NAT anywhere.
#   services 10.0.0.0/24 are DNAT-ed by kube-proxy inside the node namespace to endpoints that
#     are pods or the API server at 10.87.0.1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
action=${1:-}; state=${2:-}
[[ $action == up || $action == down || $action == net ]] && [[ -n $state ]] || { echo "usage: $0 up|down STATE" >&2; exit 64; }
state=$(cd "$state" && pwd)
n=$state/node
NS=ctopo-node
RUN=/run/ctopo-node            # short: unix socket paths are limited to 108 bytes
SOCK=$RUN/containerd.sock
CGROOT=ctopo-node              # every pod's cgroup lives below /sys/fs/cgroup/<controller>/ctopo-node
say() { echo "node: $*" >&2; }

# Processes are ours when their command line names this node's state or socket: found by id.
our_pids() { # our_pids PATTERN
  local p
  for p in /proc/[0-9]*; do
    { tr "\0" " " <"$p/cmdline"; } 2>/dev/null | grep -qF -- "$1" && echo "${p#/proc/}"
  done || true
}

kill_cgroup_tree() {
  local ctl dir pids
  for ctl in pids freezer memory cpu cpuacct cpuset blkio devices systemd; do
    dir=/sys/fs/cgroup/$ctl/$CGROOT
    [[ -d $dir ]] || continue
    for _ in 1 2 3 4 5; do
      pids=$(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
      [[ -z $pids ]] && break
      kill -9 $pids 2>/dev/null || true
      sleep 0.3
    done
  done
  for ctl in /sys/fs/cgroup/*/; do
    dir=$ctl$CGROOT
    [[ -d $dir ]] && find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

unmount_under() { # unmounts every mount point below $1, deepest first
  local m
  { awk '{print $5}' /proc/self/mountinfo | grep -F -- "$1" || true; } | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

stop_pid() { # stop_pid PID: SIGTERM, then SIGKILL after 10 s
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

down() {
  local f pid
  for f in kubelet kube-proxy; do
    [[ -f $n/$f.pid ]] && stop_pid "$(cat "$n/$f.pid")" && rm -f "$n/$f.pid"
  done
  kill_cgroup_tree                                       # every container process, at once
  for pid in $(our_pids "-address $SOCK"); do stop_pid "$pid"; done   # the runc shims
  [[ -f $n/containerd.pid ]] && stop_pid "$(cat "$n/containerd.pid")" && rm -f "$n/containerd.pid"
  unmount_under "$n/"
  unmount_under "$RUN/"
  unmount_under "/run/netns/$NS"
  ip netns del "$NS" 2>/dev/null || true                 # takes the veth, bridge and iptables with it
  ip route del 10.88.0.0/16 via 10.87.0.2 2>/dev/null || true
  ip link del ctopo-h 2>/dev/null || true
  kill_cgroup_tree
  rm -rf "$RUN"
  # containerd 2 puts its shims' sockets and ctr's fifos under /run/containerd whatever its
  # config says; with no containerd left running they are ours and stale.
  if ! pgrep -x containerd >/dev/null; then
    rm -rf /run/containerd/s /run/containerd/fifo /run/containerd/runc
    rmdir /run/containerd 2>/dev/null || true
  fi
  say "down: stopped, unmounted, namespace $NS removed"
}

checks() {
  (( EUID == 0 )) || { say "the node needs root (namespaces, mounts, cgroups)"; exit 1; }
  [[ -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ]] || { say "no cgroup hierarchy under /sys/fs/cgroup"; exit 1; }
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || { say "overlayfs is not available (modprobe overlay)"; exit 1; }
  for c in runc iptables nsenter ip; do command -v $c >/dev/null || { say "$c is needed (apt-get install runc iptables iproute2 util-linux)"; exit 1; }; done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || { say "CNI plugins are needed in /usr/lib/cni (apt-get install containernetworking-plugins)"; exit 1; }
  if ip netns list | grep -qw "$NS"; then say "a node namespace $NS exists already (another dev node runs, or one was not stopped: tools/node/node.sh down STATE)"; exit 1; fi
}

wait_for() { # wait_for WHAT SECONDS COMMAND…
  local what=$1 secs=$2 t=0; shift 2
  until "$@" >/dev/null 2>&1; do
    (( t++ >= secs * 5 )) && { say "$what did not come up in $secs s"; return 1; }
    sleep 0.2
  done
}

nx() { nsenter --net="/run/netns/$NS" -- "$@"; }

net() {
  checks
  # ---- network namespace, link to the machine ------------------------------------------------
  ip netns add "$NS"
  ip link add ctopo-h type veth peer name ctopo-n
  ip link set ctopo-n netns "$NS"
  ip addr add 10.87.0.1/24 dev ctopo-h
  ip link set ctopo-h up
  ip route add 10.88.0.0/16 via 10.87.0.2
  nx ip addr add 10.87.0.2/24 dev ctopo-n
  nx ip link set ctopo-n up
  nx ip link set lo up
  nx sysctl -qw net.ipv4.ip_forward=1     # this namespace only: pods <-> services <-> API server
  say "namespace $NS: 10.87.0.2 <-> 10.87.0.1 (this machine), pods 10.88.0.0/16, no default route"
}

up() {
  : "${CONTAINERD_DIR:?} ${KUBE_DIR:?} ${IMAGES_DIR:?}"
  ip netns list | grep -qw "$NS" || net
  mkdir -p "$n" "$RUN" "$n/cni/net.d" "$n/kubelet"
  # ---- cgroups: one parent for everything the node runs --------------------------------------
  local ctl
  for ctl in /sys/fs/cgroup/*/; do
    [[ $ctl == */unified/ ]] && continue
    mkdir -p "$ctl$CGROOT"
  done
  [[ -f /sys/fs/cgroup/cpuset/$CGROOT/cpuset.cpus ]] && {
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$CGROOT/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$CGROOT/cpuset.mems"
  }
  # ---- CNI: one bridge, addresses from host-local, default route to the bridge only ----------
  cat >"$n/cni/net.d/10-ctopo.conflist" <<JSON
{"cniVersion":"1.0.0","name":"ctopo","plugins":[{"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":false,"hairpinMode":true,
 "ipam":{"type":"host-local","ranges":[[{"subnet":"10.88.0.0/16","gateway":"10.88.0.1"}]],"routes":[{"dst":"0.0.0.0/0"}],"dataDir":"$n/cni/ipam"}},
 {"type":"portmap","capabilities":{"portMappings":true}}]}
JSON
  # ---- containerd --------------------------------------------------------------------------
  cat >"$n/containerd.toml" <<TOML
version = 3
root = "$n/containerd/root"
state = "$RUN/containerd"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "localhost/ctopo-pause:dev"
[plugins."io.containerd.cri.v1.runtime"]
  enable_selinux = false
  # No container gets an oom_score_adj below containerd's own (0 here): lowering it needs
  # CAP_SYS_RESOURCE, which a machine may keep out of even root's bounding set (this one does),
  # and runc then fails every pod sandbox (the pause container asks for -998) with "can't get
  # final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$RUN/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$n/cni/net.d"
TOML
  say "starting containerd"
  PATH=$CONTAINERD_DIR:$PATH nsenter --net="/run/netns/$NS" -- setsid "$CONTAINERD_DIR/containerd" \
    --config "$n/containerd.toml" </dev/null >>"$n/containerd.log" 2>&1 &
  echo $! >"$n/containerd.pid"
  wait_for containerd 30 "$CONTAINERD_DIR/ctr" -a "$SOCK" version
  local img
  for img in pause ctopo-beam cluster-topology; do
    [[ -f $IMAGES_DIR/$img.tar ]] || continue
    "$CONTAINERD_DIR/ctr" -a "$SOCK" -n k8s.io images import --local "$IMAGES_DIR/$img.tar" >/dev/null
  done
  say "images: $("$CONTAINERD_DIR/ctr" -a "$SOCK" -n k8s.io images ls -q | grep -v sha256 | tr '\n' ' ')"
  # ---- kube-proxy ---------------------------------------------------------------------------
  cat >"$n/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $n/kube-proxy.kubeconfig }
mode: iptables
clusterCIDR: 10.88.0.0/16
hostnameOverride: ctopo-node
bindAddress: 10.87.0.2
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
YAML
  say "starting kube-proxy"
  nsenter --net="/run/netns/$NS" -- setsid "$KUBE_DIR/kube-proxy" --config "$n/kube-proxy.yaml" --v=1 \
    </dev/null >>"$n/kube-proxy.log" 2>&1 &
  echo $! >"$n/kube-proxy.pid"
  # ---- kubelet ------------------------------------------------------------------------------
  printf 'nameserver 127.0.0.1\noptions ndots:0\n' >"$n/resolv.conf"   # no DNS: nothing to resolve
  cat >"$n/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROOT
containerRuntimeEndpoint: unix://$SOCK
address: 10.87.0.2
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $state/pki/ca.crt }
authorization: { mode: Webhook }
tlsCertFile: $state/pki/kubelet-serving.crt
tlsPrivateKeyFile: $state/pki/kubelet-serving.key
clusterDomain: cluster.local
resolvConf: $n/resolv.conf
failSwapOn: false
registerNode: true
maxPods: 60
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: { memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1% }
enforceNodeAllocatable: [pods]
localStorageCapacityIsolation: false
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
fileCheckFrequency: 10s
YAML
  say "starting the kubelet"
  nsenter --net="/run/netns/$NS" -- setsid "$KUBE_DIR/kubelet" --config "$n/kubelet.yaml" \
    --kubeconfig "$n/kubelet.kubeconfig" --root-dir "$n/kubelet" --hostname-override ctopo-node \
    --node-ip 10.87.0.2 --v=1 </dev/null >>"$n/kubelet.log" 2>&1 &
  echo $! >"$n/kubelet.pid"
  wait_for "the kubelet's /healthz" 60 nsenter --net="/run/netns/$NS" -- \
    bash -c "exec 3<>/dev/tcp/127.0.0.1/10248 && printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3 && grep -q ok <&3" || {
    tail -n 20 "$n/kubelet.log" >&2; exit 1; }
  say "up: kubelet, kube-proxy, containerd in namespace $NS"
}

mkdir -p "$n"
case $action in
  net) net ;;
  up) up ;;
  down) down ;;
esac
