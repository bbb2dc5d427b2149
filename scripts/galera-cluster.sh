#!/usr/bin/env bash
# A 3-node MariaDB Galera cluster on this machine, for jobq's scale-out tests and for trying jobq
# on Galera: each node has its own data directory, config file, SQL port and Galera ports, all on
# 127.0.0.1. Needs mariadbd (wsrep built in), the wsrep provider libgalera_smm.so (Debian's
# galera-4) and rsync (state transfer).
#
#   scripts/galera-cluster.sh start          start the nodes that are down (bootstrapping when none runs); prints the URL
#   scripts/galera-cluster.sh stop           stop every node cleanly (SIGTERM)
#   scripts/galera-cluster.sh kill-node N    stop node N hard (SIGKILL), like a crash
#   scripts/galera-cluster.sh start-node N   start node N again; it rejoins and catches up
#   scripts/galera-cluster.sh status         each node's state (Synced, Donor, down ...); exit 3 unless all are Synced
#   scripts/galera-cluster.sh destroy        stop every node and delete the data directories
#
# Node N (1-3) serves SQL on BASE+N, Galera replication on BASE+100+N, incremental state transfer
# on BASE+200+N and full state transfer (rsync) on BASE+300+N. BASE is $JOBQ_GALERA_BASE_PORT
# (default 4400: SQL on 4401-4403). The data lives in $JOBQ_GALERA_DIR (default /tmp/jobq-galera-BASE).
set -euo pipefail

command=${1:-}
base=${JOBQ_GALERA_BASE_PORT:-4400}
dir=${JOBQ_GALERA_DIR:-${TMPDIR:-/tmp}/jobq-galera-$base}
NODES=(1 2 3)

# shellcheck source=scripts/server-helpers.sh
source "$(dirname "$0")/server-helpers.sh"
find_provider() {
  for candidate in "${JOBQ_WSREP_PROVIDER:-}" /usr/lib/galera/libgalera_smm.so /usr/lib/libgalera_smm.so /usr/lib64/galera-4/libgalera_smm.so; do
    if [ -n "$candidate" ] && [ -f "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

fail() { echo "galera-cluster: $*" >&2; exit 1; }
server=$(find_binary mariadbd) || fail "mariadbd is not installed (Galera needs MariaDB with wsrep)"
client=$(find_binary mariadb) || fail "the mariadb client is not installed"
installer=$(find_binary mariadb-install-db) || fail "mariadb-install-db is not installed"

sql_port() { echo $((base + $1)); }
node_dir() { echo "$dir/node$1"; }
pidfile() { echo "$(node_dir "$1")/mysqld.pid"; }
url() {
  local hosts=() n
  for n in "${NODES[@]}"; do hosts+=("127.0.0.1:$(sql_port "$n")"); done
  echo "mysql://root@$(IFS=,; echo "${hosts[*]}")"
}

answers() { "$client" -uroot -h127.0.0.1 -P"$(sql_port "$1")" --connect-timeout=1 -e 'SELECT 1' >/dev/null 2>&1; }
sql() { "$client" -uroot -h127.0.0.1 -P"$(sql_port "$1")" --connect-timeout=1 -N -B -e "$2" 2>/dev/null || true; }
status_variable() { sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" | cut -f2; }
state() { status_variable "$1" wsrep_local_state_comment; }
cluster_status() { status_variable "$1" wsrep_cluster_status; }
synced() { [ "$(state "$1")" = Synced ]; }
pid() { local f; f=$(pidfile "$1"); [ -f "$f" ] && cat "$f" || true; }
running() { local p; p=$(pid "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
any_running() { local n; for n in "${NODES[@]}"; do if running "$n"; then return 0; fi; done; return 1; }


write_config() {
  local n=$1 d gcomm=() m
  d=$(node_dir "$n")
  for m in "${NODES[@]}"; do gcomm+=("127.0.0.1:$((base + 100 + m))"); done
  mkdir -p "$d/data" "$d/tmp"
  # Small buffers: a test cluster. Galera wants row-based binary logging and interleaved
  # auto-increment locks; wsrep_auto_increment_control (on by default) makes each node hand out
  # ids with its own remainder modulo the cluster size, which jobq's lanes must cope with.
  { node_config_head "$d" "$(sql_port "$n")"; cat <<EOF
innodb_buffer_pool_size=64M
max_connections=200
binlog_format=ROW
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=$provider
wsrep_cluster_name=jobq-test-$base
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1:$((base + 100 + n))
wsrep_cluster_address=gcomm://$(IFS=,; echo "${gcomm[*]}")
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$((base + 100 + n));ist.recv_addr=127.0.0.1:$((base + 200 + n));gcache.size=64M"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((base + 300 + n))
EOF
  } >"$d/my.cnf"
  [ "$(id -u)" = 0 ] && chown -R mysql:mysql "$d"
  if [ ! -d "$d/data/mysql" ]; then
    "$installer" --defaults-file="$d/my.cnf" "${run_as[@]}" --auth-root-authentication-method=normal \
      --skip-test-db --wsrep-on=OFF >"$d/install.log" 2>&1 || fail "mariadb-install-db failed for node $n; see $d/install.log"
  fi
}

start_node() {
  local n=$1 bootstrap=${2:-} d
  d=$(node_dir "$n")
  running "$n" && return 0
  write_config "$n"
  if [ -n "$bootstrap" ] && [ -f "$d/data/grastate.dat" ]; then
    # This node starts the cluster: it must be allowed to, even if it was not the last to stop.
    sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$d/data/grastate.dat"
  fi
  "$server" --defaults-file="$d/my.cnf" "${run_as[@]}" ${bootstrap:+--wsrep-new-cluster} >/dev/null 2>&1 &
  disown || true
  if ! wait_until 90 synced "$n"; then
    # The log's end goes with the message: a test suite's cluster is destroyed after a failure.
    tail -n 15 "$d/error.log" >&2 2>/dev/null
    fail "node $n is not Synced within 90 s (state: $(state "$n")); see $d/error.log (its end above)"
  fi
}

# After losing the majority (two of three nodes killed), the survivor stays non-Primary and
# refuses queries; the documented way back is to bootstrap a new Primary component from it.
ensure_primary() {
  local n
  for n in "${NODES[@]}"; do [ "$(cluster_status "$n")" = Primary ] && return 0; done
  for n in "${NODES[@]}"; do
    if running "$n"; then
      sql "$n" "SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'"
      wait_until 30 synced "$n" || fail "node $n did not become Synced after bootstrapping a Primary component from it"
      return 0
    fi
  done
}

stop_node() { stop_by_pidfile "$(pidfile "$1")" "$2" "node $1" || exit 1; }

run_as=()
[ "$(id -u)" = 0 ] && run_as=(--user=mysql)
provider=$(find_provider) || fail "no wsrep provider libgalera_smm.so found (install Debian's galera-4, or set JOBQ_WSREP_PROVIDER)"

case "$command" in
  start)
    mkdir -p "$dir"
    if any_running; then ensure_primary; else start_node 1 bootstrap; fi
    for n in "${NODES[@]}"; do start_node "$n"; done
    url
    ;;
  # The last node to stop is the one safe to bootstrap from; start handles either way.
  stop) stop_nodes ;;
  kill-node)
    n=$(node_number "${2:-}") || exit 2
    stop_node "$n" KILL
    ;;
  start-node)
    n=$(node_number "${2:-}") || exit 2
    if any_running; then ensure_primary; start_node "$n"; else start_node "$n" bootstrap; fi
    ;;
  status)
    describe_node() {
      local s
      s=$(state "$1")
      echo "node $1: ${s:-down}$([ -n "$s" ] && echo ", $(cluster_status "$1")") (mysql://root@127.0.0.1:$(sql_port "$1"))"
      [ "$s" = Synced ]
    }
    report_nodes describe_node
    ;;
  destroy) destroy_nodes ;;
  *) usage ;;
esac
