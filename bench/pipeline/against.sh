#!/usr/bin/env bash
# bench/pipeline/against.sh REV: `pnpm bench:pipeline` at concurrency 1 on this checkout and on
# the services of an earlier commit, alternated in one session (this machine's speed drifts by a
# fifth within an hour, so only runs side by side tell whether a change made the stage path
# slower). Both sides are driven by this checkout's bench (the same driver and figures): it is
# copied over the earlier tree's, which is a temporary git worktree, installed with pnpm and
# removed at the end. The services of both sides run as the bench runs them (compiled bundles,
# production flags), on the same local servers (scripts/infra.sh, or MONGO_URL / AMQP_URL).
#
#   pnpm bench:pipeline:against 0df6dae          (PAIRS=3, DURATION=20 seconds per run,
#                                                 CONCURRENCY=1, or 20)
#
# Prints one line per run (overhead p50 / p99 ms, database commands per stage, stages/s, the
# baseline's stage p50, the CPU ms per stage of both services, FerretDB, PostgreSQL and RabbitMQ,
# and of all five together) and each side's medians.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
REV="${1:?usage: pnpm bench:pipeline:against REV (a commit, tag or branch)}"
PAIRS="${PAIRS:-3}"
DURATION="${DURATION:-20}"
CONCURRENCY="${CONCURRENCY:-1}"

WORK="$(mktemp -d)"
TREE="$WORK/tree"
cleanup() {
  git -C "$ROOT" worktree remove --force "$TREE" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "[against] $REV in a temporary worktree" >&2
git -C "$ROOT" worktree add --detach "$TREE" "$REV" >/dev/null
(cd "$TREE" && pnpm install --frozen-lockfile --prefer-offline </dev/null >"$WORK/install.log" 2>&1) || {
  tail -n 20 "$WORK/install.log" >&2
  exit 1
}
rm -rf "$TREE/bench"
cp -r "$ROOT/bench" "$TREE/bench"
cp "$ROOT/scripts/build-services.ts" "$TREE/scripts/build-services.ts"
# An earlier tree may not have esbuild (the bundler of the compiled services) among its own packages.
if [[ ! -e "$TREE/node_modules/esbuild" ]]; then
  ln -s "$(readlink -f "$ROOT/node_modules/esbuild")" "$TREE/node_modules/esbuild"
fi

if [[ -z "${MONGO_URL:-}" || -z "${AMQP_URL:-}" ]]; then
  bash "$ROOT/scripts/infra.sh" up >/dev/null
  eval "$(bash "$ROOT/scripts/infra.sh" env)"
fi
export MONGO_URL AMQP_URL

RESULTS="$WORK/results"
: >"$RESULTS"
run_side() { # run_side NAME DIR: one bench run; appends "NAME p50 p99 cmds stages/s base cpu-llm cpu-orch ferret pg rabbit total"
  local out="$WORK/run.txt"
  if ! (cd "$2" && CONCURRENCY="$CONCURRENCY" DURATION="$DURATION" node --require tsx/cjs bench/pipeline/run.ts </dev/null >"$out" 2>&1); then
    tail -n 20 "$out" >&2
    exit 1
  fi
  local row base cpu servers total
  row="$(awk -v c="$CONCURRENCY" '$1 == "pipeline" && $2 == c {print $7, $8, $9, $4}' "$out")"
  base="$(awk -v c="$CONCURRENCY" '$1 == "baseline" && $2 == c {print $5}' "$out")"
  cpu="$(sed -n 's/.*CPU ms per stage, llm-gateway \/ orchestrator: \([0-9.]*\) \/ \([0-9.]*\).*/\1 \2/p' "$out")"
  servers="$(grep "local servers' CPU ms per stage" "$out" | awk '{
    for (i = 1; i <= NF; i++) { v = $(i + 1); sub(/,$/, "", v); if ($i == "FerretDB") f = v; if ($i == "PostgreSQL") p = v; if ($i == "RabbitMQ") r = v }
    print f + 0, p + 0, r + 0 }')"
  total="$(echo "$cpu $servers" | awk '{print $1 + $2 + $3 + $4 + $5}')"
  echo "$1 $row $base $cpu $servers $total" >>"$RESULTS"
  printf '%-8s p50 %6s  p99 %6s  cmds %5s  stages/s %5s  baseline p50 %5s  CPU llm-gateway / orchestrator / FerretDB / PostgreSQL / RabbitMQ %s %s = %s\n' \
    "$1" $row "$base" "$cpu" "$servers" "$total"
}

for i in $(seq 1 "$PAIRS"); do
  # Which side goes first alternates too: a drift within a pair then favours neither.
  if ((i % 2)); then
    run_side "$REV" "$TREE"
    run_side current "$ROOT"
  else
    run_side current "$ROOT"
    run_side "$REV" "$TREE"
  fi
done

echo "medians over $PAIRS runs a side at concurrency $CONCURRENCY (overhead p50, p99 ms; commands per stage; stages/s; baseline p50; CPU ms per stage: llm-gateway, orchestrator, FerretDB, PostgreSQL, RabbitMQ, all five):"
for side in "$REV" current; do
  awk -v side="$side" '
    $1 == side { n++; for (c = 2; c <= 12; c++) v[c, n] = $c }
    END {
      printf "  %-8s", side
      for (c = 2; c <= 12; c++) {
        for (i = 1; i <= n; i++) a[i] = v[c, i]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        printf " %7.2f", m
      }
      printf "\n"
    }' "$RESULTS"
done
