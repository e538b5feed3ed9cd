#!/usr/bin/env bash
# A local three-node RabbitMQ cluster (Debian's rabbitmq-server), for the cluster test and bench.
# The single node of scripts/infra.sh stays the default; this one is separate in every way: its
# own node names, AMQP and distribution ports, data and log folders, and Erlang cookie (in its own
# HOME, so the system node's /var/lib/rabbitmq/.erlang.cookie is never read or written). It never
# touches another node: every rabbitmqctl call names one of its own nodes with -n.
#
#   scripts/rabbit-cluster.sh up        fresh data, three nodes started and clustered; prints
#                                       `export AMQP_URL=...` (the three URLs, comma-separated)
#   scripts/rabbit-cluster.sh down      stops the three nodes (kill -9 for one that does not stop)
#   scripts/rabbit-cluster.sh status    one line per node: up/down, port, pid
#   scripts/rabbit-cluster.sh env       only the export line
#   scripts/rabbit-cluster.sh kill N    kill -9 of node N (a, b or c)
#   scripts/rabbit-cluster.sh start N   starts node N again on its data (it rejoins the cluster)
#   scripts/rabbit-cluster.sh stop N    stops node N cleanly (rabbitmqctl stop)
#   scripts/rabbit-cluster.sh leaders   "node count" lines: how many quorum queues each node leads
#   scripts/rabbit-cluster.sh ctl N ARGS...  rabbitmqctl -n <node N> ARGS
#
# Why no HAProxy: the broker client takes a comma-separated list of URLs and tries them in turn
# (docs/decisions/0049-broker-failover.md); in Kubernetes one Service URL does the same.
#
# Settings (environment): PACK_CLUSTER_DIR (default <repo>/.local/rabbit-cluster),
# PACK_CLUSTER_PORT (default 5681: nodes on 5681, 5682, 5683; distribution on port + 20000).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
DIR="${PACK_CLUSTER_DIR:-$REPO_ROOT/.local/rabbit-cluster}"
BASE_PORT="${PACK_CLUSTER_PORT:-5681}"
RMQ_BIN=/usr/lib/rabbitmq/bin
NODES=(a b c)

log() { printf '[rabbit-cluster] %s\n' "$*" >&2; }
die() {
  printf '[rabbit-cluster] ERROR: %s\n' "$*" >&2
  exit 1
}

[[ -x "$RMQ_BIN/rabbitmq-server" ]] || die "rabbitmq-server is not installed (bash scripts/deps.sh install)"

index() { # index N: 0, 1 or 2
  case "$1" in a) echo 0 ;; b) echo 1 ;; c) echo 2 ;; *) die "node must be a, b or c (got '$1')" ;; esac
}
port() { echo $((BASE_PORT + $(index "$1"))); }
# The same name on any machine: short names on localhost.
node_name() { echo "pack-$1@localhost"; }
pid_file() { echo "$DIR/$1/pid"; }
# The Erlang VM's pid (RABBITMQ_PID_FILE, written once the node booted); `pid` is its wrapper's.
vm_pid() { cat "$DIR/$1/rabbit.pid" 2>/dev/null || pgrep -P "$(cat "$(pid_file "$1")")" beam.smp || true; }
kill9() { # kill9 N: the VM and its wrapper, at once
  local vm wrapper
  vm="$(vm_pid "$1")"
  wrapper="$(cat "$(pid_file "$1")" 2>/dev/null || true)"
  [[ -n "$vm" ]] && kill -9 "$vm" 2>/dev/null
  [[ -n "$wrapper" ]] && kill -9 "$wrapper" 2>/dev/null
  rm -f "$(pid_file "$1")" "$DIR/$1/rabbit.pid"
}

answers() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" >/dev/null 2>&1; }

# The environment of node N (and of the CLI talking to it): everything its own.
node_env() {
  local n=$1
  export HOME="$DIR/home"
  export RABBITMQ_NODENAME RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT RABBITMQ_DIST_PORT
  RABBITMQ_NODENAME="$(node_name "$n")"
  RABBITMQ_NODE_PORT="$(port "$n")"
  RABBITMQ_DIST_PORT=$((RABBITMQ_NODE_PORT + 20000))
  export RABBITMQ_USE_LONGNAME=false
  export RABBITMQ_MNESIA_BASE="$DIR/$n/mnesia" RABBITMQ_LOG_BASE="$DIR/$n/log"
  export RABBITMQ_MNESIA_DIR="$DIR/$n/mnesia/$RABBITMQ_NODENAME"
  export RABBITMQ_PLUGINS_EXPAND_DIR="$DIR/$n/plugins-expand"
  export RABBITMQ_PID_FILE="$DIR/$n/rabbit.pid"
  export RABBITMQ_CONFIG_FILE="$DIR/rabbitmq.conf"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$DIR/advanced.config"
  export RABBITMQ_CONF_ENV_FILE="$DIR/rabbitmq-env.conf"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/enabled_plugins"
  export RABBITMQ_LOGS="$DIR/$n/log/rabbit.log"
}

ctl() { # ctl N ARGS...: rabbitmqctl against node N only
  local n=$1
  shift
  (node_env "$n" && timeout 60 "$RMQ_BIN/rabbitmqctl" -q -n "$(node_name "$n")" "$@")
}

alive() { # alive N: the node's Erlang VM is running
  local pid
  pid="$(cat "$(pid_file "$1")" 2>/dev/null || true)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

prepare() {
  mkdir -p "$DIR/home"
  if [[ ! -s "$DIR/home/.erlang.cookie" ]]; then
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DIR/home/.erlang.cookie"
  fi
  chmod 400 "$DIR/home/.erlang.cookie"
  : >"$DIR/rabbitmq-env.conf"
  echo '[].' >"$DIR/enabled_plugins"
  echo '[].' >"$DIR/advanced.config"
  # Loopback only; quorum queues on every node; a node that comes back rejoins by itself.
  cat >"$DIR/rabbitmq.conf" <<'EOF'
loopback_users.guest = true
log.file.level = warning
log.console = false
cluster_partition_handling = pause_minority
EOF
  # The cluster forms as the nodes boot: a node on fresh data joins the listed ones (peer
  # discovery; since RabbitMQ 3.8.18 under a lock, so the three may start at once).
  local i=1 n
  echo 'cluster_formation.peer_discovery_backend = classic_config' >>"$DIR/rabbitmq.conf"
  for n in "${NODES[@]}"; do
    echo "cluster_formation.classic_config.nodes.$i = $(node_name "$n")" >>"$DIR/rabbitmq.conf"
    i=$((i + 1))
  done
}

start_node() {
  local n=$1
  alive "$n" && return 0
  mkdir -p "$DIR/$n/log" "$DIR/$n/mnesia"
  rm -f "$DIR/$n/rabbit.pid"
  answers "$(port "$n")" && die "port $(port "$n") is taken by something else (set PACK_CLUSTER_PORT)"
  log "starting $(node_name "$n") on 127.0.0.1:$(port "$n")"
  (
    node_env "$n"
    cd "$DIR/$n"
    # `rabbitmq-server` ends in `exec erl`: the background job's pid is the node's VM.
    setsid nohup "$RMQ_BIN/rabbitmq-server" >"$DIR/$n/log/stdout.log" 2>&1 </dev/null &
    echo $! >"$(pid_file "$n")"
  )
}

await_node() { # await_node N SECONDS
  local n=$1 deadline=$((SECONDS + $2))
  until ctl "$n" await_startup -t 30 >/dev/null 2>&1; do
    if ! alive "$n"; then
      tail -n 20 "$DIR/$n/log/stdout.log" "$DIR/$n/log/rabbit.log" >&2 2>/dev/null || true
      die "$(node_name "$n") exited while starting"
    fi
    ((SECONDS < deadline)) || die "$(node_name "$n") did not start within $2 s"
    sleep 0.5
  done
}

urls() {
  local n out=()
  for n in "${NODES[@]}"; do out+=("amqp://guest:guest@127.0.0.1:$(port "$n")"); done
  (IFS=,; printf '%s' "${out[*]}")
}
print_env() { printf "export AMQP_URL='%s'\n" "$(urls)"; }

cmd_up() {
  local t0=$SECONDS n
  if alive a && alive b && alive c; then
    log "already up"
    print_env
    return 0
  fi
  cmd_down
  rm -rf "${DIR:?}/a" "${DIR:?}/b" "${DIR:?}/c"
  prepare
  for n in "${NODES[@]}"; do start_node "$n"; done
  for n in "${NODES[@]}"; do await_node "$n" 120; done
  local running
  running="$(ctl a eval 'length(rabbit_nodes:all_running()).')"
  [[ "$running" == 3 ]] || die "cluster has $running running nodes, expected 3"
  log "three nodes clustered in $((SECONDS - t0)) s"
  print_env
}

cmd_down() {
  local n pid vm
  for n in "${NODES[@]}"; do
    alive "$n" || continue
    pid="$(cat "$(pid_file "$n")")"
    log "stopping $(node_name "$n") (pid $pid)"
    # SIGTERM: the node stops as `rabbitmqctl stop` stops it, without starting the CLI's own VM.
    vm="$(vm_pid "$n")"
    [[ -z "$vm" ]] || kill -TERM "$vm" 2>/dev/null || true
  done
  for n in "${NODES[@]}"; do
    alive "$n" || continue
    pid="$(cat "$(pid_file "$n")")"
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill9 "$n"
  done
  rm -f "$DIR"/?/pid "$DIR"/?/rabbit.pid
  return 0
}

cmd_status() {
  local n state
  for n in "${NODES[@]}"; do
    if alive "$n" && answers "$(port "$n")"; then state=up; else state=down; fi
    printf '%-16s %-5s 127.0.0.1:%s pid %s\n' "$(node_name "$n")" "$state" "$(port "$n")" \
      "$(cat "$(pid_file "$n")" 2>/dev/null || echo -)"
  done
}

cmd_leaders() {
  # Asked of the first node that answers; quorum queues only (`leader` is empty for the others).
  local n
  for n in "${NODES[@]}"; do
    alive "$n" || continue
    if ctl "$n" list_queues leader type --no-table-headers 2>/dev/null |
      awk '$2 == "quorum" { count[$1]++ } END { for (node in count) print node, count[node] }'; then
      return 0
    fi
  done
  die "no node answers"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) print_env ;;
  leaders) cmd_leaders ;;
  kill)
    index "${2:-}" >/dev/null
    alive "$2" || die "$(node_name "$2") is not running"
    log "kill -9 $(node_name "$2")"
    kill9 "$2"
    ;;
  start)
    index "${2:-}" >/dev/null
    start_node "$2"
    await_node "$2" 120
    ;;
  stop)
    index "${2:-}" >/dev/null
    ctl "$2" stop
    rm -f "$(pid_file "$2")" "$DIR/$2/rabbit.pid"
    ;;
  ctl)
    index "${2:-}" >/dev/null
    n=$2
    shift 2
    ctl "$n" "$@"
    ;;
  *)
    echo "usage: $0 up|down|status|env|leaders|kill N|start N|stop N|ctl N ARGS (N: a, b or c)" >&2
    exit 2
    ;;
esac
