#!/usr/bin/env bash
# Local infrastructure for the pack platform, without Docker.
#
#   scripts/infra.sh up      start what does not already answer; prints `export` lines on stdout
#   scripts/infra.sh down    stop what this script started
#   scripts/infra.sh status  one line per component
#   scripts/infra.sh env     only the `export MONGO_URL=... AMQP_URL=...` lines: eval "$(scripts/infra.sh env)"
#   scripts/infra.sh restart-ferretdb   stops the FerretDB this script started, rebuilds if needed, starts it
#
# A three-node RabbitMQ cluster instead of the single node (scripts/rabbit-cluster.sh, which these
# call; docs/decisions/0049). The single node stays the default:
#   scripts/infra.sh cluster-up      three nodes on 127.0.0.1:5681-5683, clustered; prints
#                                    `export AMQP_URL='amqp://...:5681,amqp://...:5682,amqp://...:5683'`
#   scripts/infra.sh cluster-down    stops them
#   scripts/infra.sh cluster-status  one line per node
#
# For bench/ferretdb (which runs a stock and a patched FerretDB side by side):
#   scripts/infra.sh ferretdb-bin [patched|stock]   builds if needed; prints the binary's path
#   scripts/infra.sh pg-up                          PostgreSQL only; prints PACK_PG_URL and whether it started it
#   scripts/infra.sh pg-db create|drop NAME         a database in that cluster
#   scripts/infra.sh pg-db sql NAME <SQL            runs the statements on stdin there; prints the rows
#   scripts/infra.sh pg-down                        stops this checkout's PostgreSQL
#
# A private database pair (PostgreSQL + FerretDB, never RabbitMQ), e.g. for test/e2e/database-restart
# and `pnpm bench:crash --database-restart`, which kill and restart it under load:
#   PACK_INFRA_DIR=<own dir> PACK_PG_PORT=<port> PACK_MONGO_PORT=<port> scripts/infra.sh db-up
#       starts (or restarts what is down of) that pair, ignoring MONGO_URL; prints its MONGO_URL
#   ... scripts/infra.sh db-down    stops that pair (FerretDB, then PostgreSQL); RabbitMQ untouched
#   FerretDB's pid is in $PACK_INFRA_DIR/run/ferretdb.pid (a kill -9 takes it from there).
#   PACK_MONGO_LISTEN=0.0.0.0 has FerretDB listen on every address, not only the loopback: for a
#   pair run in a network namespace of its own (the partition tests' database host).
#
# Components:
#   - PostgreSQL 15: a private cluster (data in $PACK_INFRA_DIR/pg), 127.0.0.1:$PACK_PG_PORT,
#     role pack/pack (superuser), database "ferretdb" — FerretDB's storage.
#   - FerretDB v1.24.2 (MongoDB wire protocol on 127.0.0.1:$PACK_MONGO_PORT), built from tools/ferretdb
#     with our patches (tools/ferretdb/patches: atomic single-document updates; indexed `_id`
#     reads, sorts, skips, limits and counts in PostgreSQL; counts of broad filters kept in
#     memory; indexes on stored key columns, so skipped pages read an index alone; ranges and
#     `$or` in PostgreSQL, so pages by key read from the key on; it must run as ONE process per
#     PostgreSQL database, see tools/ferretdb/README.md).
#   - RabbitMQ (the Debian package), 127.0.0.1:$PACK_AMQP_PORT, guest/guest.
# If MONGO_URL is already set, PostgreSQL and FerretDB are left alone (you bring your own MongoDB);
# likewise AMQP_URL and RabbitMQ.
#
# Settings (environment): PACK_INFRA_DIR (default <repo>/.local/infra), PACK_PG_PORT (54329),
# PACK_MONGO_PORT (27017), PACK_MONGO_LISTEN (127.0.0.1), PACK_AMQP_PORT (5672),
# PACK_PG_FSYNC (on): `off` for a throwaway cluster, a test run's. PostgreSQL then leaves its
# writes to the operating system instead of flushing each commit to disk: a crash of any process
# (PostgreSQL's own, kill -9 included) still loses nothing, only a crash of the machine may. Every
# `up` of this checkout's cluster sets it, a running one's too (a reload; no restart).
#
# Progress goes to stderr; stdout carries only the `export` lines (from `up` and `env`).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
# shellcheck source=lib/daemon.sh
source "$SCRIPT_DIR/lib/daemon.sh"

PACK_INFRA_DIR="${PACK_INFRA_DIR:-$REPO_ROOT/.local/infra}"
PACK_PG_PORT="${PACK_PG_PORT:-54329}"
PACK_MONGO_PORT="${PACK_MONGO_PORT:-27017}"
PACK_MONGO_LISTEN="${PACK_MONGO_LISTEN:-127.0.0.1}"
PACK_PG_FSYNC="${PACK_PG_FSYNC:-on}"
PACK_AMQP_PORT="${PACK_AMQP_PORT:-5672}"

# Go is usually in /usr/local/go/bin, which a non-login shell (CI) may not have on PATH.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="/usr/local/go/bin:$PATH"
fi

BIN_DIR="$PACK_INFRA_DIR/bin"
LOG_DIR="$PACK_INFRA_DIR/logs"
RUN_DIR="$PACK_INFRA_DIR/run"
FERRET_SRC="$REPO_ROOT/tools/ferretdb"
FERRET_MODULE="github.com/FerretDB/FerretDB"
FERRET_BUILD_DIR="$PACK_INFRA_DIR/build/ferretdb"
# PACK_FERRETDB_BIN: where the patched binary is (built there when missing or stale); a private
# pair (db-up) may reuse the default folder's build instead of building its own.
FERRET_BIN="${PACK_FERRETDB_BIN:-$BIN_DIR/ferretdb}"
FERRET_PID="$RUN_DIR/ferretdb.pid"
FERRET_LOG="$LOG_DIR/ferretdb.log"
RABBIT_MARKER="$RUN_DIR/rabbitmq.started-by-infra"

# ---------------------------------------------------------------------------------------------
# helpers

log() { printf '[infra] %s\n' "$*" >&2; }
die() { printf '[infra] ERROR: %s\n' "$*" >&2; exit 1; }
case "$PACK_PG_FSYNC" in on | off) ;; *) die "PACK_PG_FSYNC must be on or off, not '$PACK_PG_FSYNC'" ;; esac

is_root() { [[ "$(id -u)" == 0 ]]; }

# answers PORT: a TCP connect to 127.0.0.1:PORT succeeds (within 2 s).
answers() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" >/dev/null 2>&1
}

# wait_port PORT SECONDS
wait_port() { wait_until "$2" "" answers "$1"; }

# shell single-quote
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

mongo_url() { printf '%s' "${MONGO_URL:-mongodb://pack:pack@127.0.0.1:${PACK_MONGO_PORT}/?authMechanism=PLAIN}"; }
amqp_url() { printf '%s' "${AMQP_URL:-amqp://guest:guest@127.0.0.1:${PACK_AMQP_PORT}}"; }

print_env() {
  printf 'export MONGO_URL=%s\n' "$(sq "$(mongo_url)")"
  printf 'export AMQP_URL=%s\n' "$(sq "$(amqp_url)")"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL
#
# PostgreSQL refuses to run as root, so when this script runs as root, initdb/pg_ctl/psql run as
# the `postgres` OS user (runuser), and the cluster's folders are owned by it. That user must be
# able to traverse every parent folder of the data dir. When the infra dir is reachable for it
# (the usual case: parent folders with mode 755), the cluster lives in $PACK_INFRA_DIR/pg.
# When it is not (e.g. the repo is under a mode-700 home folder), we do NOT loosen permissions of the
# user's home folders; instead the cluster lives in a folder owned by postgres under its own home,
# /var/lib/postgresql/pack-infra/<hash of PACK_INFRA_DIR>/, and $PACK_INFRA_DIR/pg-location
# records where. When run as a normal user, everything runs directly as that user.

PG_BINDIR=""
pg_find_bindir() {
  if [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then
    PG_BINDIR=/usr/lib/postgresql/15/bin
  elif command -v pg_config >/dev/null 2>&1 && [[ -x "$(pg_config --bindir)/initdb" ]] &&
    "$(pg_config --bindir)/initdb" --version | grep -q ' 15\.'; then
    PG_BINDIR="$(pg_config --bindir)"
  else
    die "PostgreSQL 15 not found (expected /usr/lib/postgresql/15/bin); install it: apt-get install -y postgresql-15"
  fi
}

PG_USE_RUNUSER=0
if is_root; then PG_USE_RUNUSER=1; fi

# as_pg CMD...: run a command as the PostgreSQL owner.
as_pg() {
  if ((PG_USE_RUNUSER)); then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# The cluster: "$PG_BASE/pg" (data dir) and "$PG_BASE/pg-run" (unix socket, initdb and server log).
# pg_resolve_base must run (in this shell, not a $(...) subshell) before pg_data/pg_run are used.
PG_BASE=""
pg_resolve_base() {
  [[ -n "$PG_BASE" ]] && return 0
  mkdir -p "$PACK_INFRA_DIR"
  PG_BASE="$PACK_INFRA_DIR"
  if ((PG_USE_RUNUSER)); then
    id -u postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' OS user (install postgresql-15)"
    if ! runuser -u postgres -- test -x "$PACK_INFRA_DIR"; then
      PG_BASE="/var/lib/postgresql/pack-infra/$(printf '%s' "$PACK_INFRA_DIR" | sha256sum | cut -c1-12)"
    fi
  fi
  # A unix socket path is limited to ~107 bytes; for a very deep checkout, put the pg-run folder
  # under /tmp instead (still private: 0700, owned by the cluster's owner).
  if ((${#PG_BASE} > 80)); then
    PG_RUN_DIR="/tmp/pack-pg-run-$(printf '%s' "$PACK_INFRA_DIR" | sha256sum | cut -c1-12)"
  else
    PG_RUN_DIR="$PG_BASE/pg-run"
  fi
}
pg_data() { printf '%s/pg' "$PG_BASE"; }
pg_run() { printf '%s' "$PG_RUN_DIR"; }

pg_prepare_dirs() {
  local data run
  data="$(pg_data)"
  run="$(pg_run)"
  mkdir -p "$data" "$run"
  if ((PG_USE_RUNUSER)); then
    chown postgres:postgres "$data" "$run"
    if [[ "$PG_BASE" != "$PACK_INFRA_DIR" ]]; then
      chown postgres:postgres "$PG_BASE" "$(dirname "$PG_BASE")"
    fi
  fi
  if [[ "$PG_BASE" != "$PACK_INFRA_DIR" ]]; then
    printf '%s\n' "$data" >"$PACK_INFRA_DIR/pg-location"
  fi
  chmod 700 "$data" "$run"
}

pg_psql() {
  as_pg "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$(pg_run)" -p "$PACK_PG_PORT" -U postgres -d postgres "$@"
}

pg_running() {
  local data
  data="$(pg_data)"
  [[ -f "$data/postmaster.pid" ]] && as_pg "$PG_BINDIR/pg_ctl" -D "$data" status >/dev/null 2>&1
}

pg_up() {
  pg_find_bindir
  pg_resolve_base
  pg_prepare_dirs
  local data run
  data="$(pg_data)"
  run="$(pg_run)"

  if answers "$PACK_PG_PORT"; then
    if pg_running; then
      log "postgresql: already up on 127.0.0.1:$PACK_PG_PORT"
    else
      # e.g. another checkout's cluster: it has the same role/database, so FerretDB can use it.
      log "postgresql: port $PACK_PG_PORT already answers (not this checkout's cluster); using it as is"
      return 0
    fi
  else
    if [[ ! -f "$data/PG_VERSION" ]]; then
      log "postgresql: initdb in $data"
      # Local (unix socket) connections: trust — the socket lives in a 0700 folder of the owner.
      # TCP on 127.0.0.1: password (scram-sha-256).
      as_pg "$PG_BINDIR/initdb" -D "$data" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >"$run/initdb.log" 2>&1 ||
        { tail -n 30 "$run/initdb.log" >&2; die "initdb failed"; }
    fi
    log "postgresql: starting on 127.0.0.1:$PACK_PG_PORT"
    # Port, listen address and socket folder are passed at each start, so PACK_PG_PORT may change.
    # Each FerretDB process keeps a pool of connections (50 by default; the shared one 200, see
    # ferret_up): with PostgreSQL's default of 100, two of them left nothing for a third or for
    # psql ("sorry, too many clients already"). 400 fits the shared one and four private pairs.
    if ! as_pg "$PG_BINDIR/pg_ctl" -D "$data" -l "$run/postgresql.log" -w -t 60 \
      -o "-p $PACK_PG_PORT -k $run -c listen_addresses=127.0.0.1 -c max_connections=400" start >/dev/null; then
      tail -n 30 "$run/postgresql.log" >&2 || true
      die "postgresql did not start"
    fi
  fi

  pg_flush_setting
  # Role and database (idempotent).
  pg_psql <<'SQL'
SET password_encryption = 'scram-sha-256';
SELECT 'CREATE ROLE pack LOGIN SUPERUSER' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pack') \gexec
ALTER ROLE pack WITH LOGIN SUPERUSER PASSWORD 'pack';
SELECT 'CREATE DATABASE ferretdb OWNER pack' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'ferretdb') \gexec
SQL
}

# fsync and full_page_writes take a reload: the cluster follows the last `up`, running or not.
# Torn pages, which full_page_writes guards against, come only from a machine crash as well.
pg_flush_setting() {
  pg_psql >/dev/null <<SQL
ALTER SYSTEM SET fsync = $PACK_PG_FSYNC;
ALTER SYSTEM SET full_page_writes = $PACK_PG_FSYNC;
SELECT pg_reload_conf();
SQL
}

pg_down() {
  pg_resolve_base
  local data
  data="$(pg_data)"
  if [[ -f "$data/postmaster.pid" ]]; then
    pg_find_bindir
    log "postgresql: stopping"
    as_pg "$PG_BINDIR/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
  else
    log "postgresql: not running"
  fi
}

# ---------------------------------------------------------------------------------------------
# FerretDB

# The binary's inputs: tools/ferretdb (main.go, go.mod, go.sum) and, for the patched build,
# tools/ferretdb/patches/*.patch. Their hash is kept next to the binary (<bin>.stamp): a binary
# without a stamp (e.g. a stock build from before the patches) or with another hash is rebuilt.
ferret_stamp() {
  local variant=$1
  {
    printf 'ferretdb build recipe 2, %s\n' "$variant"
    (cd "$FERRET_SRC" && sha256sum main.go go.mod go.sum)
    if [[ "$variant" == patched ]]; then
      (cd "$FERRET_SRC" && sha256sum patches/*.patch)
    fi
  } | sha256sum | cut -c1-64
}

# ferret_patch_source: copies the FerretDB module (from the Go module proxy, through the module
# cache, which stays untouched) to $FERRET_BUILD_DIR/src, applies tools/ferretdb/patches/*.patch
# there, and writes $FERRET_BUILD_DIR/go.mod: tools/ferretdb/go.mod with a `replace` pointing at
# the copy. The copy's path stays the same, so Go's build cache keeps what did not change.
ferret_patch_source() {
  local moddir patch patches=("$FERRET_SRC"/patches/*.patch)
  [[ -f "${patches[0]}" ]] || die "no patches in $FERRET_SRC/patches"
  (cd "$FERRET_SRC" && go mod download "$FERRET_MODULE") || die "could not download $FERRET_MODULE"
  moddir="$(cd "$FERRET_SRC" && go list -m -f '{{.Dir}}' "$FERRET_MODULE")"
  [[ -d "$moddir" ]] || die "$FERRET_MODULE is not in the module cache after download"
  rm -rf "$FERRET_BUILD_DIR"
  mkdir -p "$FERRET_BUILD_DIR"
  cp -R "$moddir" "$FERRET_BUILD_DIR/src"
  chmod -R u+w "$FERRET_BUILD_DIR/src" # the module cache's files are read-only
  for patch in "${patches[@]}"; do
    log "ferretdb: applying patches/$(basename "$patch")"
    ferret_apply "$patch" || die "patches/$(basename "$patch") does not apply to $FERRET_MODULE"
  done
  cp "$FERRET_SRC/go.mod" "$FERRET_SRC/go.sum" "$FERRET_BUILD_DIR/"
  go mod edit -replace="$FERRET_MODULE=$FERRET_BUILD_DIR/src" "$FERRET_BUILD_DIR/go.mod"
}

# ferret_apply PATCH: applies a `git diff` patch to $FERRET_BUILD_DIR/src; refuses if any hunk
# does not match. git is there in a clone; `patch` is the fallback.
ferret_apply() {
  if command -v git >/dev/null 2>&1; then
    # The copy may sit inside this repo's worktree (.local/infra); without the ceiling, git
    # would take paths relative to the repo and skip files outside the current folder.
    (cd "$FERRET_BUILD_DIR/src" && GIT_CEILING_DIRECTORIES="$FERRET_BUILD_DIR" git apply "$1")
  elif command -v patch >/dev/null 2>&1; then
    patch -d "$FERRET_BUILD_DIR/src" -p1 --forward --batch --quiet <"$1"
  else
    die "git or patch is needed to apply tools/ferretdb/patches"
  fi
}

# ferret_build_variant patched|stock BIN: builds BIN unless its stamp is current. "stock" is the
# unpatched module, kept only for bench/ferretdb's comparison.
ferret_build_variant() {
  local variant=$1 bin=$2 stamp modfile=()
  [[ -f "$FERRET_SRC/main.go" ]] || die "missing $FERRET_SRC/main.go"
  stamp="$(ferret_stamp "$variant")"
  if [[ -x "$bin" && -f "$bin.stamp" && "$(cat "$bin.stamp")" == "$stamp" ]]; then return 0; fi
  command -v go >/dev/null 2>&1 || die "go is needed to build FerretDB (tools/ferretdb)"
  mkdir -p "$(dirname "$bin")"
  if [[ "$variant" == patched ]]; then
    ferret_patch_source
    modfile=(-modfile="$FERRET_BUILD_DIR/go.mod")
  fi
  log "ferretdb: building the $variant binary (go build in tools/ferretdb; the first build takes a few minutes)"
  # -buildvcs=false: the folder is inside a git repo that may be owned by another user.
  (cd "$FERRET_SRC" && GOFLAGS="${GOFLAGS:-} -buildvcs=false" go build ${modfile[@]+"${modfile[@]}"} -o "$bin.tmp" .) ||
    die "ferretdb build failed"
  mv -f "$bin.tmp" "$bin"
  printf '%s\n' "$stamp" >"$bin.stamp"
}

ferret_build() { ferret_build_variant patched "$FERRET_BIN"; }

# A server this script started before the patches changed keeps running the old build: say so
# (restarting it here would cut off whoever is using it).
ferret_warn_stale() {
  ferret_pid_alive || return 0
  local pid
  pid="$(cat "$FERRET_PID")"
  if [[ ! -f "$FERRET_BIN.stamp" || "$(cat "$FERRET_BIN.stamp")" != "$(ferret_stamp patched)" ]] ||
    readlink "/proc/$pid/exe" 2>/dev/null | grep -q '(deleted)$'; then
    log "ferretdb: WARNING: the running server (pid $pid) is not built from the current tools/ferretdb" \
      "and its patches; to apply them: scripts/infra.sh restart-ferretdb (cuts off its clients)"
  fi
}

ferret_pid_alive() { daemon_alive "$FERRET_PID" ferretdb; }

ferret_up() {
  if answers "$PACK_MONGO_PORT"; then
    log "ferretdb: already answers on 127.0.0.1:$PACK_MONGO_PORT"
    ferret_warn_stale
    return 0
  fi
  ferret_build
  mkdir -p "$LOG_DIR" "$RUN_DIR"
  if ferret_pid_alive; then
    # Wait until it is gone: it holds the database's single-process lock (tools/ferretdb/main.go).
    log "ferretdb: process $(cat "$FERRET_PID") exists but port does not answer; restarting it"
    ferret_down
  fi
  log "ferretdb: starting on $PACK_MONGO_LISTEN:$PACK_MONGO_PORT (log: $FERRET_LOG)"
  # pool_max_conns: FerretDB's default is 50 PostgreSQL connections, and an open cursor keeps one
  # until the client's getMore or killCursors. A goroutine dump of the shared server hung in a
  # soak showed all 50 held by 48 open cursors while 159 commands (lock holders among them) waited
  # for a connection: the services' own driver pools (20 each) were full of those commands, so the
  # getMore that would free a cursor could not be sent. 200 is above six services' 120, so a
  # command always finds a connection (and bounded reads no longer leave cursors open: their
  # batchSize covers the limit). tools/ferretdb/main.go strips pool_* from the URL for its
  # single-process lock connection, which PostgreSQL would otherwise refuse.
  daemon_start "$FERRET_PID" "$FERRET_LOG" "$FERRET_BIN" \
    -listen-addr="$PACK_MONGO_LISTEN:$PACK_MONGO_PORT" \
    -postgresql-url="postgres://pack:pack@127.0.0.1:$PACK_PG_PORT/ferretdb?pool_max_conns=200"
  if ! wait_port "$PACK_MONGO_PORT" 60; then
    tail -n 40 "$FERRET_LOG" >&2 || true
    die "ferretdb does not answer on 127.0.0.1:$PACK_MONGO_PORT"
  fi
}

ferret_down() { daemon_stop "$FERRET_PID" ferretdb ferretdb; }

# ---------------------------------------------------------------------------------------------
# RabbitMQ

rabbit_up() {
  if answers "$PACK_AMQP_PORT"; then
    log "rabbitmq: already answers on 127.0.0.1:$PACK_AMQP_PORT"
    return 0
  fi
  if ! command -v rabbitmq-server >/dev/null 2>&1; then
    if is_root; then
      log "rabbitmq: installing rabbitmq-server (apt-get)"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rabbitmq-server >&2
    else
      die "rabbitmq-server is not installed; run: sudo apt-get install -y rabbitmq-server (or set AMQP_URL)"
    fi
    # The package's post-install may already have started it.
    if wait_port "$PACK_AMQP_PORT" 5; then
      log "rabbitmq: up after install"
      return 0
    fi
  fi
  # Listen on loopback only (the Debian wrapper's `su rabbitmq` keeps these variables).
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$PACK_AMQP_PORT"
  log "rabbitmq: starting (rabbitmq-server -detached)"
  mkdir -p "$RUN_DIR"
  # Every quorum queue holds files open: the usual soft limit of 1024 ran out here once test
  # runs had left a few hundred queues ("Ranch acceptor reducing accept rate: out of file
  # descriptors", connections left in CLOSE-WAIT). Raise it to the hard limit for the node.
  # As root, Debian's wrapper switches user with `su`, whose PAM session sets the soft limit back
  # to 1024: switch with setpriv instead (no PAM, limits kept), then the wrapper runs the node.
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  if is_root && id rabbitmq >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
    (cd /var/lib/rabbitmq && timeout 60 setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups \
      env HOME=/var/lib/rabbitmq "$(command -v rabbitmq-server)" -detached >&2) ||
      die "rabbitmq-server -detached failed"
  else
    timeout 60 rabbitmq-server -detached >&2 || die "rabbitmq-server -detached failed"
  fi
  touch "$RABBIT_MARKER"
  # await_startup fails at once while the node has not registered with epmd yet: retry it.
  local deadline=$((SECONDS + 120))
  until timeout 60 rabbitmqctl -q -t 50 await_startup >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      tail -n 30 /var/log/rabbitmq/*.log >&2 2>/dev/null || true
      die "rabbitmq did not start within 120 s"
    fi
    sleep 1
  done
  wait_port "$PACK_AMQP_PORT" 30 || die "rabbitmq started but 127.0.0.1:$PACK_AMQP_PORT does not answer"
}

rabbit_down() {
  if [[ -f "$RABBIT_MARKER" ]]; then
    log "rabbitmq: stopping (started by this script)"
    timeout 60 rabbitmqctl -q stop >&2 2>/dev/null || true
    rm -f "$RABBIT_MARKER"
  else
    log "rabbitmq: not started by this script; leaving it alone"
  fi
}

# ---------------------------------------------------------------------------------------------

cmd_up() {
  local t0=$SECONDS
  mkdir -p "$PACK_INFRA_DIR" "$LOG_DIR" "$RUN_DIR" "$BIN_DIR"
  if [[ -n "${MONGO_URL:-}" ]]; then
    log "MONGO_URL is set; not starting PostgreSQL/FerretDB"
  else
    pg_up
    ferret_up
  fi
  if [[ -n "${AMQP_URL:-}" ]]; then
    log "AMQP_URL is set; not starting RabbitMQ"
  else
    rabbit_up
  fi
  log "up in $((SECONDS - t0)) s"
  print_env
}

cmd_down() {
  ferret_down
  pg_down
  rabbit_down
}

# For bench/ferretdb: PostgreSQL alone, and throw-away databases in it.
cmd_pg_up() {
  local started=0
  answers "$PACK_PG_PORT" || started=1
  pg_up
  printf 'export PACK_PG_URL=%s\n' "$(sq "postgres://pack:pack@127.0.0.1:$PACK_PG_PORT")"
  printf 'export PACK_PG_STARTED=%s\n' "$(sq "$started")"
}

cmd_pg_db() {
  local action=${1:-} name=${2:-} sql
  # Only bench_* names, so that this can never drop FerretDB's own database.
  [[ "$name" =~ ^bench_[a-z0-9_]+$ ]] || die "pg-db: NAME must match bench_[a-z0-9_]+"
  pg_find_bindir
  if [[ "$action" == sql ]]; then
    # Statements on stdin, run in that database; rows on stdout (unaligned, | between columns).
    PGPASSWORD=pack "$PG_BINDIR/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PACK_PG_PORT" \
      -U pack -d "$name"
    return
  fi
  case "$action" in
    create) sql="CREATE DATABASE $name OWNER pack" ;;
    drop) sql="DROP DATABASE IF EXISTS $name WITH (FORCE)" ;;
    *) die "usage: $0 pg-db create|drop|sql NAME" ;;
  esac
  # Over TCP as pack (superuser): works for this checkout's cluster and for one found on the port.
  PGPASSWORD=pack "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PACK_PG_PORT" -U pack \
    -d postgres -c "$sql" >&2
}

# The database pair alone, whatever MONGO_URL says: RabbitMQ is never started or stopped here.
cmd_db_up() {
  local t0=$SECONDS
  mkdir -p "$PACK_INFRA_DIR" "$LOG_DIR" "$RUN_DIR" "$BIN_DIR"
  pg_up
  ferret_up
  log "database pair up in $((SECONDS - t0)) s"
  printf 'export MONGO_URL=%s\n' "$(sq "mongodb://pack:pack@127.0.0.1:${PACK_MONGO_PORT}/?authMechanism=PLAIN")"
}

cmd_db_down() {
  ferret_down
  pg_down
}

line() { printf '%-11s %-5s %s\n' "$1" "$2" "$3"; }
updown() { if answers "$1"; then echo up; else echo down; fi; }

cmd_status() {
  if [[ -n "${MONGO_URL:-}" ]]; then
    line postgresql n/a "(MONGO_URL set)"
    line ferretdb n/a "(MONGO_URL set: $MONGO_URL)"
  else
    line postgresql "$(updown "$PACK_PG_PORT")" "127.0.0.1:$PACK_PG_PORT"
    line ferretdb "$(updown "$PACK_MONGO_PORT")" "127.0.0.1:$PACK_MONGO_PORT"
  fi
  if [[ -n "${AMQP_URL:-}" ]]; then
    line rabbitmq n/a "(AMQP_URL set: $AMQP_URL)"
  else
    line rabbitmq "$(updown "$PACK_AMQP_PORT")" "127.0.0.1:$PACK_AMQP_PORT"
  fi
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) print_env ;;
  restart-ferretdb)
    ferret_down
    pg_up
    ferret_up
    ;;
  ferretdb-bin)
    case "${2:-patched}" in
      patched) ferret_build && printf '%s\n' "$FERRET_BIN" ;;
      stock) ferret_build_variant stock "$BIN_DIR/ferretdb-stock" && printf '%s\n' "$BIN_DIR/ferretdb-stock" ;;
      *) die "usage: $0 ferretdb-bin [patched|stock]" ;;
    esac
    ;;
  cluster-up) exec bash "$SCRIPT_DIR/rabbit-cluster.sh" up ;;
  cluster-down) exec bash "$SCRIPT_DIR/rabbit-cluster.sh" down ;;
  cluster-status) exec bash "$SCRIPT_DIR/rabbit-cluster.sh" status ;;
  pg-up) cmd_pg_up ;;
  pg-db) cmd_pg_db "${2:-}" "${3:-}" ;;
  pg-down) pg_down ;;
  db-up) cmd_db_up ;;
  db-down) cmd_db_down ;;
  *)
    echo "usage: $0 up|down|status|env|restart-ferretdb|db-up|db-down|cluster-up|cluster-down|cluster-status (bench: ferretdb-bin|pg-up|pg-db|pg-down)" >&2
    exit 2
    ;;
esac
