#!/usr/bin/env bash
# A private MariaDB/MySQL instance for fault tests (and for users without a server): its own data
# directory, port and socket, made on first use from the mariadbd/mysqld installed on the machine.
# It can be stopped and restarted without touching any other server.
#
#   scripts/private-server.sh start [PORT]     start it (initialising the data directory once); prints its URL
#   scripts/private-server.sh start-replica PORT --of PRIMARY_PORT
#                                              start a fresh replica of the private server on PRIMARY_PORT
#                                              (GTID-based, from the start of its binary log); prints its URL
#   scripts/private-server.sh stop [PORT]      stop it (SIGTERM, waits for a clean shutdown)
#   scripts/private-server.sh kill [PORT]      stop it hard (SIGKILL), like a crash
#   scripts/private-server.sh status [PORT]    say whether it answers
#   scripts/private-server.sh destroy [PORT]   stop it and delete its data directory
#
# PORT defaults to 3307. The data lives in $JOBQ_PRIVATE_SERVER_DIR (default /tmp/jobq-private-server-PORT).
# The server program is $JOBQ_SERVER_PROGRAM if set (mysql-server.sh sets it to Oracle MySQL's),
# else the machine's mariadbd or mysqld.
# Every private server writes a binary log (row format, server id = its port), so that a replica can
# follow it; a replica copies only what the primary logged, so start it before creating the jobq
# database on the primary.
set -euo pipefail

command=${1:-}
port=${2:-3307}
primary_port=
if [ "$command" = start-replica ]; then
  [ "${3:-}" = --of ] && [ -n "${4:-}" ] || { echo "private-server: usage: start-replica PORT --of PRIMARY_PORT" >&2; exit 2; }
  primary_port=$4
fi
dir=${JOBQ_PRIVATE_SERVER_DIR:-${TMPDIR:-/tmp}/jobq-private-server-$port}
data="$dir/data"
socket="$dir/mysqld.sock"
pidfile="$dir/mysqld.pid"
log="$dir/error.log"

# shellcheck source=scripts/server-helpers.sh
source "$(dirname "$0")/server-helpers.sh"

server=${JOBQ_SERVER_PROGRAM:-$(find_binary mariadbd mysqld)} || { echo "private-server: neither mariadbd nor mysqld is installed" >&2; exit 1; }
client=$(find_binary mariadb mysql) || { echo "private-server: no mariadb/mysql client is installed" >&2; exit 1; }
run_as=()
[ "$(id -u)" = 0 ] && run_as=(--user=mysql)

sql() { "$client" -uroot -h127.0.0.1 -P"$1" --connect-timeout=1 -N -B -e "$2"; }
answers() { sql "$port" 'SELECT 1' >/dev/null 2>&1; }

# A temporary folder of its own, from the initialisation on: a server that starts deletes every
# "#sql" file in its tmpdir, and in a shared /tmp those include the temporary tables other servers
# are using at that moment.
initialise() {
  [ -d "$data/mysql" ] && return 0
  mkdir -p "$data" "$dir/tmp"
  [ "$(id -u)" = 0 ] && chown -R mysql:mysql "$dir"
  if installer=$(find_binary mariadb-install-db mysql_install_db) && "$server" --version | grep -qi mariadb; then
    "$installer" --no-defaults --datadir="$data" --tmpdir="$dir/tmp" "${run_as[@]}" --auth-root-authentication-method=normal \
      --skip-test-db >"$dir/install.log" 2>&1
  else
    "$server" --no-defaults --initialize-insecure --datadir="$data" --tmpdir="$dir/tmp" "${run_as[@]}" >"$dir/install.log" 2>&1
  fi
}

# No X Protocol (MySQL's, on port 33060 for every instance; MariaDB ignores the loose- option).
start_server() {
  initialise
  local gtid=()
  "$server" --version | grep -qi mariadb || gtid=(--gtid-mode=ON --enforce-gtid-consistency=ON)
  "$server" --no-defaults --datadir="$data" --port="$port" --bind-address=127.0.0.1 --socket="$socket" \
    --pid-file="$pidfile" --log-error="$log" --tmpdir="$dir/tmp" "${run_as[@]}" \
    --max-connections=200 --server-id="$port" --log-bin=binlog --binlog-format=ROW "${gtid[@]}" --loose-mysqlx=OFF "$@" >/dev/null 2>&1 &
  disown || true
  wait_until 60 answers || { echo "private-server: no answer on port $port within 60 s; see $log" >&2; exit 1; }
}

replicating() {
  local state
  state=$("$client" -uroot -h127.0.0.1 -P"$port" --connect-timeout=1 -e 'SHOW REPLICA STATUS\G' 2>/dev/null |
    grep -E '(Slave|Replica)_(IO|SQL)_Running:' | grep -c ': Yes' || true)
  [ "$state" = 2 ]
}

case "$command" in
  start)
    if answers; then echo "mysql://root@127.0.0.1:$port"; exit 0; fi
    start_server
    echo "mysql://root@127.0.0.1:$port"
    ;;
  start-replica)
    sql "$primary_port" 'SELECT 1' >/dev/null 2>&1 || { echo "private-server: no primary answers on port $primary_port; start it first" >&2; exit 1; }
    if ! answers; then
      fresh=$([ -d "$data/mysql" ] && echo no || echo yes)
      start_server --read-only
    fi
    # A fresh replica starts from the beginning of the primary's binary log (GTID positions on
    # MariaDB, auto-positioning on MySQL); one that ran before resumes where it stopped.
    if [ "${fresh:-no}" = yes ]; then
      if "$server" --version | grep -qi mariadb; then
        sql "$port" "SET GLOBAL gtid_slave_pos = ''; CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $primary_port, MASTER_USER = 'root', MASTER_USE_GTID = slave_pos; START SLAVE"
      else
        sql "$port" "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = $primary_port, SOURCE_USER = 'root', SOURCE_AUTO_POSITION = 1; START REPLICA"
      fi
    fi
    wait_until 30 replicating || { echo "private-server: the replica on port $port does not replicate from $primary_port; see $log" >&2; exit 1; }
    echo "mysql://root@127.0.0.1:$port"
    ;;
  stop | kill)
    stop_by_pidfile "$pidfile" "$([ "$command" = kill ] && echo KILL || echo TERM)" "private-server: the server on port $port" || exit 1
    ;;
  status)
    if answers; then echo "running: mysql://root@127.0.0.1:$port (data in $data)"; else echo "not running (data in $data)"; exit 3; fi
    ;;
  destroy)
    "$0" stop "$port"
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
