#!/usr/bin/env bash
# Makes sure the local MariaDB answers on 127.0.0.1:3306, starting the machine's mariadbd if not.
set -euo pipefail

answers() { mariadb -uroot -h127.0.0.1 -P3306 -e 'SELECT 1' >/dev/null 2>&1; }

if answers; then exit 0; fi
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "ensure-mariadb: no server answers on 127.0.0.1:3306 and mariadbd is not installed (apt-get install mariadb-server)" >&2
  exit 1
fi
echo "ensure-mariadb: starting mariadbd"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
for _ in $(seq 1 60); do
  if answers; then exit 0; fi
  sleep 1
done
echo "ensure-mariadb: mariadbd did not answer within 60 s" >&2
exit 1
