# shellcheck shell=bash
# A server run in the background from a pid file: start it, wait until it answers, stop it.
# Sourced by scripts/infra.sh (FerretDB) and scripts/trace-viewer.sh (Zipkin); the caller
# defines log() (progress on stderr).

# wait_until SECONDS PID CHECK...: runs CHECK every 0.25 s until it succeeds (0) or SECONDS pass
# (1, after a last try). With a PID (not ""), gives up at once (1) when that process is gone.
wait_until() {
  local secs=$1 pid=$2 i
  shift 2
  for ((i = 0; i < secs * 4; i++)); do
    "$@" && return 0
    [[ -z "$pid" ]] || kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.25
  done
  "$@"
}

# gone PID: no such process (any more).
gone() { ! kill -0 "$1" 2>/dev/null; }

# daemon_alive PID_FILE PATTERN: the pid file names a live process whose command line has PATTERN.
daemon_alive() {
  local pid
  [[ -f "$1" ]] || return 1
  pid="$(cat "$1")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$2"
}

# daemon_start PID_FILE LOG_FILE COMMAND...: starts COMMAND in a session of its own, without stdin,
# its output appended to LOG_FILE under a dated start line; its pid goes to PID_FILE (and $DAEMON_PID).
daemon_start() {
  local pid_file=$1 log_file=$2
  shift 2
  mkdir -p "$(dirname "$pid_file")" "$(dirname "$log_file")"
  printf '\n==== %s start ====\n' "$(date -Is)" >>"$log_file"
  setsid nohup "$@" >>"$log_file" 2>&1 </dev/null &
  DAEMON_PID=$!
  echo "$DAEMON_PID" >"$pid_file"
}

# daemon_stop PID_FILE PATTERN NAME: SIGTERM to the process the pid file names (when daemon_alive),
# SIGKILL after 10 s; removes the pid file.
daemon_stop() {
  local pid_file=$1 pattern=$2 name=$3 pid
  if daemon_alive "$pid_file" "$pattern"; then
    pid="$(cat "$pid_file")"
    log "stopping $name (pid $pid)"
    kill "$pid" 2>/dev/null || true
    wait_until 10 "" gone "$pid" || kill -9 "$pid" 2>/dev/null || true
  else
    log "$name: not running (no live pid file $pid_file)"
  fi
  rm -f "$pid_file"
}
