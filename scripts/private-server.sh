#!/usr/bin/env bash
# A private MariaDB/MySQL instance for fault tests (and for users without a server): its own data
# directory, port and socket, made on first use from the mariadbd/mysqld installed on the machine.
# It can be stopped and restarted without touching any other server.
#
#   scripts/private-server.sh start [PORT]     start it (initialising the data directory once); prints its URL
#   scripts/private-server.sh stop [PORT]      stop it (SIGTERM, waits for a clean shutdown)
#   scripts/private-server.sh kill [PORT]      stop it hard (SIGKILL), like a crash
#   scripts/private-server.sh status [PORT]    say whether it answers
#   scripts/private-server.sh destroy [PORT]   stop it and delete its data directory
#
# PORT defaults to 3307. The data lives in $JOBQ_PRIVATE_SERVER_DIR (default /tmp/jobq-private-server-PORT).
set -euo pipefail

command=${1:-}
port=${2:-3307}
dir=${JOBQ_PRIVATE_SERVER_DIR:-${TMPDIR:-/tmp}/jobq-private-server-$port}
data="$dir/data"
socket="$dir/mysqld.sock"
pidfile="$dir/mysqld.pid"
log="$dir/error.log"

find_binary() {
  for name in "$@"; do
    for candidate in "$(command -v "$name" 2>/dev/null || true)" "/usr/sbin/$name" "/usr/local/mysql/bin/$name"; do
      if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
    done
  done
  return 1
}

server=$(find_binary mariadbd mysqld) || { echo "private-server: neither mariadbd nor mysqld is installed" >&2; exit 1; }
client=$(find_binary mariadb mysql) || { echo "private-server: no mariadb/mysql client is installed" >&2; exit 1; }
run_as=()
[ "$(id -u)" = 0 ] && run_as=(--user=mysql)

answers() { "$client" -uroot -h127.0.0.1 -P"$port" --connect-timeout=1 -e 'SELECT 1' >/dev/null 2>&1; }
pid() { [ -f "$pidfile" ] && cat "$pidfile" || true; }

initialise() {
  [ -d "$data/mysql" ] && return 0
  mkdir -p "$data"
  [ "$(id -u)" = 0 ] && chown -R mysql:mysql "$dir"
  if installer=$(find_binary mariadb-install-db mysql_install_db) && "$server" --version | grep -qi mariadb; then
    "$installer" --no-defaults --datadir="$data" "${run_as[@]}" --auth-root-authentication-method=normal \
      --skip-test-db >"$dir/install.log" 2>&1
  else
    "$server" --no-defaults --initialize-insecure --datadir="$data" "${run_as[@]}" >"$dir/install.log" 2>&1
  fi
}

wait_until() {
  local what=$1 seconds=$2
  for _ in $(seq 1 $((seconds * 10))); do
    if $what; then return 0; fi
    sleep 0.1
  done
  return 1
}
stopped() { local p; p=$(pid); [ -z "$p" ] || ! kill -0 "$p" 2>/dev/null; }

case "$command" in
  start)
    if answers; then echo "mysql://root@127.0.0.1:$port"; exit 0; fi
    initialise
    # Small buffers: it is a test server. The binary log stays off, as on Debian's default MariaDB.
    "$server" --no-defaults --datadir="$data" --port="$port" --bind-address=127.0.0.1 --socket="$socket" \
      --pid-file="$pidfile" --log-error="$log" "${run_as[@]}" --innodb-buffer-pool-size=64M \
      --max-connections=200 >/dev/null 2>&1 &
    disown || true
    wait_until answers 60 || { echo "private-server: no answer on port $port within 60 s; see $log" >&2; exit 1; }
    echo "mysql://root@127.0.0.1:$port"
    ;;
  stop | kill)
    p=$(pid)
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
      kill "$([ "$command" = kill ] && echo -KILL || echo -TERM)" "$p"
      wait_until stopped 60 || { echo "private-server: pid $p did not stop within 60 s" >&2; exit 1; }
    fi
    rm -f "$pidfile"
    ;;
  status)
    if answers; then echo "running: mysql://root@127.0.0.1:$port (data in $data)"; else echo "not running (data in $data)"; exit 3; fi
    ;;
  destroy)
    "$0" stop "$port"
    rm -rf "$dir"
    ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
