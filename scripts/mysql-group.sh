#!/usr/bin/env bash
# A 3-node MySQL Group Replication group on this machine, for jobq's scale-out tests and for trying
# jobq on Group Replication: each node has its own data folder, config file, SQL port and group
# communication port, all on 127.0.0.1. The server is Oracle MySQL's (see fetch-mysql.sh).
#
#   scripts/mysql-group.sh start [--multi-primary]
#                                     start the nodes that are down (bootstrapping the group when
#                                     none is in it); prints one URL per node. Single-primary by
#                                     default (node 1 the first primary); the mode is fixed when
#                                     the group is first made
#   scripts/mysql-group.sh stop           stop every node cleanly (SIGTERM)
#   scripts/mysql-group.sh kill-node N    stop node N hard (SIGKILL), like a crash
#   scripts/mysql-group.sh start-node N   start node N again; it rejoins and catches up
#   scripts/mysql-group.sh status         each node's state and role (ONLINE PRIMARY, down ...); exit 3 unless all are ONLINE
#   scripts/mysql-group.sh destroy        stop every node and delete the data folders
#
# Node N (1-3) serves SQL on BASE+N and group communication on BASE+100+N. BASE is
# $JOBQ_GROUP_BASE_PORT (default 4800: SQL on 4801-4803). The data lives in $JOBQ_GROUP_DIR
# (default ${TMPDIR:-/tmp}/jobq-mysql-group-BASE).
set -euo pipefail

command=${1:-}
base=${JOBQ_GROUP_BASE_PORT:-4800}
dir=${JOBQ_GROUP_DIR:-${TMPDIR:-/tmp}/jobq-mysql-group-$base}
NODES=(1 2 3)
# Distributed recovery (a joining node copying what it missed from a member) logs in as this user,
# made on each node outside the binary log so that every node starts from the same empty history.
RECOVERY="USER = 'jobq_recovery', PASSWORD = 'jobq_recovery'"

# shellcheck source=scripts/server-helpers.sh
source "$(dirname "$0")/server-helpers.sh"
fail() { echo "mysql-group: $*" >&2; exit 1; }
server=$("$(dirname "$0")/fetch-mysql.sh") || exit 1
client=$(find_binary mysql mariadb) || fail "no mysql/mariadb client is installed"

sql_port() { echo $((base + $1)); }
node_dir() { echo "$dir/node$1"; }
pidfile() { echo "$(node_dir "$1")/mysqld.pid"; }

answers() { "$client" -uroot -h127.0.0.1 -P"$(sql_port "$1")" --connect-timeout=1 -e 'SELECT 1' >/dev/null 2>&1; }
sql() { "$client" -uroot -h127.0.0.1 -P"$(sql_port "$1")" --connect-timeout=1 -N -B -e "$2"; }
# "ONLINE PRIMARY", "RECOVERING SECONDARY", "OFFLINE", "ERROR" ...; empty when the node is down.
member() {
  sql "$1" "SELECT CONCAT_WS(' ', MEMBER_STATE, NULLIF(MEMBER_ROLE, '')) FROM performance_schema.replication_group_members WHERE MEMBER_ID = @@server_uuid" 2>/dev/null || true
}
online() { [[ "$(member "$1")" == ONLINE* ]]; }
pid() { local f; f=$(pidfile "$1"); [ -f "$f" ] && cat "$f" || true; }
running() { local p; p=$(pid "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
any_online() { local n; for n in "${NODES[@]}"; do if online "$n"; then return 0; fi; done; return 1; }

write_config() {
  local n=$1 d seeds=() m single everywhere
  d=$(node_dir "$n")
  for m in "${NODES[@]}"; do seeds+=("127.0.0.1:$((base + 100 + m))"); done
  # Multi-primary runs with the checks Oracle recommends for it (no SERIALIZABLE, no cascading
  # foreign keys); jobq uses neither. A member that stops answering is expelled as soon as the
  # others suspect it (about 5 s), not 5 s later as by default: a faster failover for the tests.
  if [ "$(cat "$dir/mode")" = multi-primary ]; then single=OFF everywhere=ON; else single=ON everywhere=OFF; fi
  mkdir -p "$d/data" "$d/tmp"
  { node_config_head "$d" "$(sql_port "$n")"; cat <<EOF
mysqlx=OFF
max_connections=200
server_id=$((base + n))
gtid_mode=ON
enforce_gtid_consistency=ON
log_bin=binlog
report_host=127.0.0.1
report_port=$(sql_port "$n")
disabled_storage_engines=MyISAM,BLACKHOLE,FEDERATED,ARCHIVE,MEMORY
plugin_load_add=group_replication.so
loose_group_replication_group_name=6a6f6271-0000-4000-8000-$(printf '%012d' "$base")
loose_group_replication_start_on_boot=OFF
loose_group_replication_local_address=127.0.0.1:$((base + 100 + n))
loose_group_replication_group_seeds=$(IFS=,; echo "${seeds[*]}")
loose_group_replication_ip_allowlist=127.0.0.1
loose_group_replication_single_primary_mode=$single
loose_group_replication_enforce_update_everywhere_checks=$everywhere
loose_group_replication_recovery_get_public_key=ON
loose_group_replication_member_expel_timeout=0
EOF
  } >"$d/my.cnf"
  [ "$(id -u)" = 0 ] && chown -R mysql:mysql "$d"
  if [ ! -d "$d/data/mysql" ]; then
    "$server" --defaults-file="$d/my.cnf" --initialize-insecure "${run_as[@]}" >"$d/install.log" 2>&1 ||
      fail "initialising node $n failed; see $d/install.log"
  fi
}

start_node() {
  local n=$1 d
  d=$(node_dir "$n")
  if ! running "$n"; then
    write_config "$n"
    "$server" --defaults-file="$d/my.cnf" "${run_as[@]}" >/dev/null 2>&1 &
    disown || true
    wait_until 60 answers "$n" || { tail -n 15 "$d/error.log" >&2 2>/dev/null; fail "node $n does not answer within 60 s; see $d/error.log (its end above)"; }
    if [ ! -f "$d/recovery-user" ]; then
      sql "$n" "SET SQL_LOG_BIN = 0; CREATE USER jobq_recovery@'%' IDENTIFIED BY 'jobq_recovery';
        GRANT REPLICATION SLAVE, CONNECTION_ADMIN, BACKUP_ADMIN, GROUP_REPLICATION_STREAM ON *.* TO jobq_recovery@'%'; SET SQL_LOG_BIN = 1"
      touch "$d/recovery-user"
    fi
  fi
  online "$n" && return 0
  if any_online; then
    sql "$n" "START GROUP_REPLICATION $RECOVERY"
  else
    sql "$n" "SET GLOBAL group_replication_bootstrap_group = ON; START GROUP_REPLICATION $RECOVERY; SET GLOBAL group_replication_bootstrap_group = OFF"
  fi
  if ! wait_until 90 online "$n"; then
    # The log's end goes with the message: a test suite's group is destroyed after a failure.
    tail -n 15 "$d/error.log" >&2 2>/dev/null
    fail "node $n is not ONLINE within 90 s (state: $(member "$n")); see $d/error.log (its end above)"
  fi
}

stop_node() { stop_by_pidfile "$(pidfile "$1")" "$2" "node $1" || exit 1; }

run_as=()
[ "$(id -u)" = 0 ] && run_as=(--user=mysql)

case "$command" in
  start)
    mode=single-primary
    [ "${2:-}" = --multi-primary ] && mode=multi-primary
    mkdir -p "$dir"
    [ -f "$dir/mode" ] || echo "$mode" >"$dir/mode"
    [ "$(cat "$dir/mode")" = "$mode" ] || fail "the group in $dir is $(cat "$dir/mode"); destroy it first to start it $mode"
    for n in "${NODES[@]}"; do start_node "$n"; done
    for n in "${NODES[@]}"; do echo "mysql://root@127.0.0.1:$(sql_port "$n")"; done
    ;;
  stop) stop_nodes ;;
  kill-node)
    n=$(node_number "${2:-}") || exit 2
    stop_node "$n" KILL
    ;;
  start-node)
    [ -f "$dir/mode" ] || fail "no group in $dir; run start first"
    n=$(node_number "${2:-}") || exit 2
    start_node "$n"
    ;;
  status)
    describe_node() {
      local s
      s=$(member "$1")
      echo "node $1: ${s:-down} (mysql://root@127.0.0.1:$(sql_port "$1"))"
      [[ "$s" == ONLINE* ]]
    }
    report_nodes describe_node
    ;;
  destroy) destroy_nodes ;;
  *) usage ;;
esac
