# Helpers shared by private-server.sh and galera-cluster.sh; sourced, not run.

# The first of the named programs that is installed, on the PATH or where servers usually live.
find_binary() {
  for name in "$@"; do
    for candidate in "$(command -v "$name" 2>/dev/null || true)" "/usr/sbin/$name" "/usr/bin/$name" "/usr/local/mysql/bin/$name"; do
      if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
    done
  done
  return 1
}

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds; fails after SECONDS.
wait_until() {
  local seconds=$1
  shift
  for _ in $(seq 1 $((seconds * 10))); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  return 1
}

# gone PID: the process has ended (or is a zombie nobody has reaped yet: it runs no more).
gone() {
  ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# stop_by_pidfile PIDFILE SIGNAL WHAT: sends SIGNAL (TERM, KILL) to the process in PIDFILE if it
# runs, waits up to 60 s for it to end and removes the file. A server that a TERM has not ended by
# then (a Galera node under load was seen to hang in its shutdown) gets a KILL and 10 s more;
# fails with a line naming WHAT.
stop_by_pidfile() {
  local file=$1 signal=$2 what=$3 p
  p=$([ -f "$file" ] && cat "$file" || true)
  if [ -n "$p" ] && ! gone "$p"; then
    kill "-$signal" "$p"
    if ! wait_until 60 gone "$p"; then
      [ "$signal" = TERM ] && kill -KILL "$p" 2>/dev/null && wait_until 10 gone "$p" && echo "$what (pid $p) did not stop within 60 s of a TERM: killed" >&2 ||
        { echo "$what (pid $p) did not stop within 60 s" >&2; return 1; }
    fi
  fi
  rm -f "$file"
}

# node_config_head DIR PORT: the lines every local cluster node's my.cnf starts with: its folder,
# its port on 127.0.0.1, its socket, logs and tmpdir.
node_config_head() {
  local d=$1 port=$2
  cat <<EOF
[mysqld]
datadir=$d/data
port=$port
bind-address=127.0.0.1
socket=$d/mysqld.sock
pid-file=$d/mysqld.pid
log-error=$d/error.log
# Its own: a starting server deletes every "#sql" file in its tmpdir, other servers' included.
tmpdir=$d/tmp
EOF
}

# report_nodes DESCRIBE: for each of the cluster's nodes, DESCRIBE N prints its line and fails when
# the node is not usable; exits 0 when every node is, else 3.
report_nodes() {
  local n all=0
  for n in "${NODES[@]}"; do "$1" "$n" || all=3; done
  exit $all
}

# stop_nodes: stops the cluster's nodes, 3, 2, then 1, with the calling script's stop_node.
stop_nodes() {
  local n
  for n in 3 2 1; do stop_node "$n" TERM; done
}

# destroy_nodes: ends the cluster's nodes with SIGKILL and deletes their folder ($dir): a clean
# shutdown buys nothing for data deleted next, and a MariaDB 10.11.19 Galera node was seen to hang
# in its shutdown with one InnoDB purge thread spinning and its memory growing by about 250 MB a
# second, until the machine swapped and the OOM killer ended it (stop_by_pidfile's 60 s were
# enough for 15 GB).
destroy_nodes() {
  local n
  for n in 3 2 1; do stop_node "$n" KILL; done
  rm -rf "$dir"
}

# node_number ARG: ARG when it names one of a cluster's 3 nodes; else a line saying so, and failure.
node_number() {
  case "${1:-}" in 1 | 2 | 3) echo "$1" ;; *) echo "say which node: 1, 2 or 3 (got \"${1:-}\")" >&2; return 1 ;; esac
}

# usage: the calling script's header comment (its lines after #! up to the first that is no
# comment), on stderr; exits 2.
usage() {
  sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}
