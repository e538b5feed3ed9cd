#!/usr/bin/env bash
# A local trace viewer for the pack platform, without Docker: Zipkin's server
# (io.zipkin:zipkin-server, the `exec` jar from Maven Central) with in-memory storage and its UI.
#
#   scripts/trace-viewer.sh up      fetches the jar if needed, starts the server unless it already
#                                   answers; prints `export` lines on stdout (as `env`)
#   scripts/trace-viewer.sh down    stops the server this script started
#   scripts/trace-viewer.sh status  one line: up or down, and where
#   scripts/trace-viewer.sh env     only the `export` lines: eval "$(scripts/trace-viewer.sh env)"
#   scripts/trace-viewer.sh fetch   downloads the jar into the cache unless it is there; prints its path
#   scripts/trace-viewer.sh jar     prints the cached jar's path; exit 1 when it is not there
#
# `PACK_TRACING=1 pnpm start` runs `up` and gives every service the variables `env` prints:
#   OTEL_TRACES_EXPORTER=zipkin
#   OTEL_EXPORTER_ZIPKIN_ENDPOINT=http://127.0.0.1:9411/api/v2/spans
#   PACK_TRACE_VIEWER_URL=http://127.0.0.1:9411     (the UI: /zipkin/, a trace: /zipkin/traces/<id>)
# Zipkin 3.6.1 has no OTLP receiver (POST /v1/traces answers 404: OTLP is the separate zipkin-otel
# module, not in the exec jar), so the services use the OpenTelemetry SDK's standard Zipkin
# exporter. Spans live in memory only: a restart forgets them.
#
# The jar (135 MB) is pinned: version and SHA-256 below, the hash being the one Maven Central
# publishes beside the jar (.sha256; the .sha1 matches too). To upgrade, change both. Java 17+ runs
# it (scripts/deps.sh checks for Java; the suite fetches the jar with `scripts/deps.sh install`).
#
# Settings (environment): PACK_TRACE_VIEWER_DIR (default <repo>/.local/trace-viewer: run/ and logs/),
# PACK_TRACE_VIEWER_PORT (9411, on 127.0.0.1), PACK_TRACE_VIEWER_CACHE (default <repo>/.local/cache:
# the jar), PACK_TRACE_VIEWER_HEAP (256m), PACK_TRACE_VIEWER_MAX_SPANS (100000: the oldest traces
# are dropped beyond), PACK_MAVEN_REPO (https://repo1.maven.org/maven2, or a mirror of it).
#
# Progress goes to stderr; stdout carries only the `export` lines (from `up` and `env`) and the
# jar's path (from `fetch`).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
# shellcheck source=lib/daemon.sh
source "$SCRIPT_DIR/lib/daemon.sh"

ZIPKIN_VERSION=3.6.1
ZIPKIN_SHA256=d8326e0ed4f43855dba81228f688554706e52578a7c782d9a90b73f8680654a1
JAVA_MIN=17

VIEWER_DIR="${PACK_TRACE_VIEWER_DIR:-$REPO_ROOT/.local/trace-viewer}"
PORT="${PACK_TRACE_VIEWER_PORT:-9411}"
CACHE_DIR="${PACK_TRACE_VIEWER_CACHE:-$REPO_ROOT/.local/cache}"
HEAP="${PACK_TRACE_VIEWER_HEAP:-256m}"
MAX_SPANS="${PACK_TRACE_VIEWER_MAX_SPANS:-100000}"
MAVEN_REPO="${PACK_MAVEN_REPO:-https://repo1.maven.org/maven2}"

JAR="$CACHE_DIR/zipkin-server-$ZIPKIN_VERSION-exec.jar"
JAR_URL="$MAVEN_REPO/io/zipkin/zipkin-server/$ZIPKIN_VERSION/zipkin-server-$ZIPKIN_VERSION-exec.jar"
PID_FILE="$VIEWER_DIR/run/zipkin.pid"
LOG_FILE="$VIEWER_DIR/logs/zipkin.log"
BASE_URL="http://127.0.0.1:$PORT"

log() { printf '[trace-viewer] %s\n' "$*" >&2; }
die() {
  printf '[trace-viewer] ERROR: %s\n' "$*" >&2
  exit 1
}

[[ "$PORT" =~ ^[0-9]+$ ]] && ((PORT > 0 && PORT < 65536)) ||
  die "PACK_TRACE_VIEWER_PORT must be a TCP port (1-65535), not \"$PORT\""

# shell single-quote
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

print_env() {
  printf 'export OTEL_TRACES_EXPORTER=%s\n' "$(sq zipkin)"
  printf 'export OTEL_EXPORTER_ZIPKIN_ENDPOINT=%s\n' "$(sq "$BASE_URL/api/v2/spans")"
  printf 'export PACK_TRACE_VIEWER_URL=%s\n' "$(sq "$BASE_URL")"
}

answers() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" >/dev/null 2>&1; }
# A Zipkin server answers /info with {"zipkin":{"version":...}}.
is_zipkin() { curl -sf -m 3 "$BASE_URL/info" 2>/dev/null | grep -q '"zipkin"'; }
healthy() { curl -sf -m 3 "$BASE_URL/health" 2>/dev/null | grep -q '"UP"'; }

pid_alive() { daemon_alive "$PID_FILE" zipkin-server; }

# ---------------------------------------------------------------------------------------------

find_java() {
  local java="${JAVA_HOME:+$JAVA_HOME/bin/java}" version major
  [[ -n "$java" && -x "$java" ]] || java="$(command -v java || true)"
  [[ -n "$java" ]] || die "java $JAVA_MIN+ is needed to run Zipkin: sudo bash scripts/deps.sh install (or apt-get install openjdk-17-jre-headless)"
  # `openjdk version "17.0.15" ...` (or "1.8.0_..." for Java 8)
  version="$("$java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)"
  major="${version%%.*}"
  [[ "$major" == 1 ]] && major="$(cut -d. -f2 <<<"$version")"
  [[ "$major" =~ ^[0-9]+$ ]] && ((major >= JAVA_MIN)) ||
    die "Zipkin $ZIPKIN_VERSION needs Java $JAVA_MIN+, $java is \"$version\""
  printf '%s\n' "$java"
}

cmd_fetch() {
  if [[ -f "$JAR" ]]; then
    printf '%s\n' "$JAR"
    return 0
  fi
  command -v curl >/dev/null 2>&1 || die "curl is needed to download $JAR_URL"
  mkdir -p "$CACHE_DIR"
  local part="$JAR.part.$$" actual
  log "downloading zipkin-server $ZIPKIN_VERSION (135 MB) from $JAR_URL"
  if ! curl -fsSL --retry 3 --connect-timeout 20 -m 600 -o "$part" "$JAR_URL"; then
    rm -f "$part"
    die "could not download $JAR_URL"
  fi
  actual="$(sha256sum "$part" | cut -c1-64)"
  if [[ "$actual" != "$ZIPKIN_SHA256" ]]; then
    rm -f "$part"
    die "$JAR_URL has SHA-256 $actual, expected $ZIPKIN_SHA256 (Maven Central's .sha256): not used"
  fi
  mv -f "$part" "$JAR" # atomic: a concurrent fetch finds either no jar or a whole one
  log "cached $JAR (SHA-256 checked)"
  printf '%s\n' "$JAR"
}

# wait_healthy PID: until the server answers /health (90 s at most) or the process is gone.
wait_healthy() { wait_until 90 "$1" healthy; }

cmd_up() {
  if answers; then
    if is_zipkin; then
      log "a Zipkin server already answers on $BASE_URL; using it (UI: $BASE_URL/zipkin/)"
      print_env
      return 0
    fi
    die "127.0.0.1:$PORT is taken by something that is not Zipkin: set PACK_TRACE_VIEWER_PORT"
  fi
  local java pid
  java="$(find_java)"
  cmd_fetch >/dev/null
  mkdir -p "$VIEWER_DIR/run" "$VIEWER_DIR/logs"
  if pid_alive; then
    # Another `up` may have started it a moment ago: give it the time a start takes.
    log "zipkin-server (pid $(cat "$PID_FILE")) is starting; waiting for it"
    if wait_healthy "$(cat "$PID_FILE")"; then
      log "up: UI $BASE_URL/zipkin/, spans in at $BASE_URL/api/v2/spans"
      print_env
      return 0
    fi
    log "it does not answer; restarting it"
    cmd_down
  fi
  log "starting zipkin-server $ZIPKIN_VERSION on $BASE_URL (log: $LOG_FILE)"
  # Loopback only; in-memory storage. SerialGC and C1 only: a small footprint and a quick start
  # on a shared machine (a local viewer does not need peak throughput).
  daemon_start "$PID_FILE" "$LOG_FILE" env STORAGE_TYPE=mem MEM_MAX_SPANS="$MAX_SPANS" \
    "$java" -Xmx"$HEAP" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$JAR" \
    '--armeria.ports[0].ip=127.0.0.1' "--armeria.ports[0].port=$PORT" '--armeria.ports[0].protocols[0]=http'
  pid=$DAEMON_PID
  if ! wait_healthy "$pid"; then
    tail -n 30 "$LOG_FILE" >&2 || true
    kill -0 "$pid" 2>/dev/null || die "zipkin-server exited before answering (log: $LOG_FILE)"
    die "zipkin-server does not answer on $BASE_URL/health after 90 s (log: $LOG_FILE)"
  fi
  log "up: UI $BASE_URL/zipkin/, spans in at $BASE_URL/api/v2/spans"
  print_env
}

cmd_down() { daemon_stop "$PID_FILE" zipkin-server zipkin-server; }

cmd_status() {
  local state=down note=""
  if answers && is_zipkin; then
    state=up
    pid_alive && note="pid $(cat "$PID_FILE")" || note="not started by this script"
    printf '%-13s %-5s %s (%s)\n' trace-viewer "$state" "$BASE_URL/zipkin/" "$note"
  else
    printf '%-13s %-5s %s\n' trace-viewer "$state" "$BASE_URL/zipkin/"
  fi
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) print_env ;;
  fetch) cmd_fetch ;;
  jar) [[ -f "$JAR" ]] && printf '%s\n' "$JAR" ;;
  *)
    echo "usage: $0 up|down|status|env|fetch|jar" >&2
    exit 2
    ;;
esac
