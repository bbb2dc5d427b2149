#!/usr/bin/env bash
# A private Oracle MySQL server, for the test suite on MySQL and for users without one: the machine's
# own mysqld if Oracle MySQL is installed, else MySQL 9.x fetched once by fetch-mysql.sh. It runs
# with its own data folder, port and socket, beside any other server.
#
#   scripts/mysql-server.sh start [PORT]      start it (initialising its data folder once); prints its URL
#   scripts/mysql-server.sh start-replica PORT --of PRIMARY_PORT
#                                             start a fresh replica of the MySQL server on PRIMARY_PORT
#   scripts/mysql-server.sh stop [PORT]       stop it (waits for a clean shutdown)
#   scripts/mysql-server.sh kill [PORT]       stop it hard (SIGKILL), like a crash
#   scripts/mysql-server.sh status [PORT]     say whether it answers
#   scripts/mysql-server.sh destroy [PORT]    stop it and delete its data folder
#
# PORT defaults to 3308. The data lives in $JOBQ_PRIVATE_SERVER_DIR (default
# $JOBQ_MYSQL_DIR/server-PORT, $JOBQ_MYSQL_DIR defaulting to ${TMPDIR:-/tmp}/jobq-mysql).
set -euo pipefail

scripts=$(dirname "$0")
# shellcheck source=scripts/server-helpers.sh
source "$scripts/server-helpers.sh"
command=${1:-}
port=${2:-3308}
case "$command" in
  start | start-replica | stop | kill | status | destroy) ;;
  *) usage ;;
esac
program=$("$scripts/fetch-mysql.sh") || exit 1
cache=${JOBQ_MYSQL_DIR:-${TMPDIR:-/tmp}/jobq-mysql}
JOBQ_SERVER_PROGRAM=$program JOBQ_PRIVATE_SERVER_DIR=${JOBQ_PRIVATE_SERVER_DIR:-$cache/server-$port} \
  exec "$scripts/private-server.sh" "$command" "$port" "${@:3}"
