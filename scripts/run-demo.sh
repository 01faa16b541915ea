#!/usr/bin/env bash
# `make run`: mvd serve at work on a demo database that LanceDB writes.
#
#   1. LanceDB creates table `events` and view `purchases`
#      (createMaterializedView); mvd creates view `big_refunds` with an
#      interval policy (mvd view create … --auto-refresh interval).
#   2. `mvd serve --db DIR` runs in the background (log in DIR.serve.log).
#   3. `mvd subscribe --db DIR` prints a line per view refresh.
#   4. A LanceDB writer commits a small batch every DEMO_GAP_MS.
#
# It runs until Ctrl-C, or for DEMO_SECONDS seconds (default: until Ctrl-C
# on a terminal, 20 s otherwise, so CI and scripts end), then stops the
# writer, the subscriber and the daemon (which drains) and prints a summary.
#
# Environment: MVD (the binary, default bin/mvd), DEMO_DB (default
# .cache/demo-db, recreated), DEMO_SECONDS, DEMO_GAP_MS (default 1000),
# DEMO_ROWS (initial events, default 1000).
set -euo pipefail

MVD=${MVD:-bin/mvd}
DB=${DEMO_DB:-.cache/demo-db}
GAP=${DEMO_GAP_MS:-1000}
ROWS=${DEMO_ROWS:-1000}
if [[ -z "${DEMO_SECONDS:-}" ]]; then
	if [[ -t 0 ]]; then DEMO_SECONDS=0; else DEMO_SECONDS=20; fi
fi
HARNESS=testdata/lancedb
LOG="$DB.serve.log"
export LANCEDB_LOG=${LANCEDB_LOG:-error} # quiet LanceDB's "No existing dataset … will be created" warnings

serve_pid= sub_pid= writer_pid=
say() { printf '\033[1m== %s\033[0m\n' "$*"; }
[[ -t 1 ]] || say() { printf '== %s\n' "$*"; }

alive() { [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null; }

# stop PID SIGNAL SECONDS: signal a child and wait for it, killing it if it
# takes longer than SECONDS.
stop() {
	local pid=$1 sig=$2 secs=$3
	alive "$pid" || return 0
	kill -"$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < secs * 10; i++)); do
		alive "$pid" || break
		sleep 0.1
	done
	alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleaned=
cleanup() {
	[[ -n "$cleaned" ]] && return
	cleaned=1
	trap '' INT TERM
	echo
	say "stopping: the writer, then mvd subscribe, then mvd serve (it drains refreshes in flight)"
	stop "$writer_pid" TERM 5
	# Let the last commits' refreshes reach the subscriber.
	sleep 1
	stop "$sub_pid" INT 5
	stop "$serve_pid" TERM 30
	if [[ -d "$DB/purchases.lance" && -x "$MVD" ]]; then
		say "where the views are now"
		for v in purchases big_refunds; do
			"$MVD" view show --db "$DB" "$v" 2>/dev/null | grep -E '^(view|version|refreshed):' | sed -e 's/, at [0-9]* ms//' -e 's/^/  /' || true
		done
		echo
		echo "The demo database stays in $DB (daemon log: $LOG). Try:"
		echo "  $MVD table scan $DB/purchases.lance --format table --limit 5"
		echo "  $MVD serve --db $DB            # and in another terminal:"
		echo "  $MVD subscribe --db $DB --json"
	fi
}
trap cleanup EXIT
trap 'exit 0' INT # Ctrl-C is how the demo is meant to end
trap 'exit 143' TERM

rm -rf "$DB" "$LOG"
mkdir -p "$DB"
DB=$(cd "$DB" && pwd)
LOG="$DB.serve.log"

say "LanceDB creates table events ($ROWS rows) and view purchases in $DB"
node "$HARNESS/demo_writer.mjs" setup --dir "$DB" --rows "$ROWS"

say "mvd creates view big_refunds, refreshed at most every 2 s"
"$MVD" view create --db "$DB" big_refunds --source events \
	--select "id, user, amount" --where "kind = 'refund' AND amount > 50" \
	--auto-refresh interval --interval 2s | sed 's/^/  /'

say "mvd serve --db $DB  (log: $LOG)"
"$MVD" serve --db "$DB" --admin-addr 127.0.0.1:0 >"$LOG" 2>&1 &
serve_pid=$!
for ((i = 0; ; i++)); do
	[[ -f "$DB/.mvd/serve.json" ]] && break
	if ! alive "$serve_pid" || ((i > 300)); then
		echo "mvd serve did not start; its log:" >&2
		cat "$LOG" >&2
		exit 1
	fi
	sleep 0.1
done
admin=$(sed -n 's/.*"admin_addr": *"\([^"]*\)".*/\1/p' "$DB/.mvd/serve.json")
echo "  serving; metrics: curl -s http://$admin/metrics | grep ^mvd_"

say "mvd subscribe --db $DB  (one line per view refresh)"
"$MVD" subscribe --db "$DB" > >(sed -u 's/^/[subscribe] /') 2>&1 &
sub_pid=$!
sleep 0.5

if ((DEMO_SECONDS > 0)); then
	say "LanceDB commits a small batch every $GAP ms for $DEMO_SECONDS s (DEMO_SECONDS=0: until Ctrl-C)"
else
	say "LanceDB commits a small batch every $GAP ms; Ctrl-C stops everything"
fi
node "$HARNESS/demo_writer.mjs" write --dir "$DB" --gap-ms "$GAP" &
writer_pid=$!

start=$SECONDS
while alive "$writer_pid" && alive "$serve_pid"; do
	if ((DEMO_SECONDS > 0 && SECONDS - start >= DEMO_SECONDS)); then
		break
	fi
	sleep 0.2
done
if ! alive "$serve_pid"; then
	echo "mvd serve exited; its log:" >&2
	tail -20 "$LOG" >&2
	exit 1
fi
