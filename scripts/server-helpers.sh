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
