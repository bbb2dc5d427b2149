#!/usr/bin/env bash
# Prints the path of an Oracle MySQL server program (mysqld) for the private servers of
# mysql-server.sh and mysql-group.sh. Where Oracle's mysqld is installed normally, that one.
# Otherwise, on first use, it fetches Debian's mysql-server-core (Oracle MySQL 9.x, from Debian's
# "sid" suite on the mirror the machine already uses) into a cache folder of its own, with every
# library it needs, and prints a launcher that runs it through those libraries' own loader: the
# server needs a newer glibc and libstdc++ than Debian 12 has, so it cannot be installed system-wide.
#
# The cache is $JOBQ_MYSQL_DIR (default ${TMPDIR:-/tmp}/jobq-mysql); delete it to fetch again.
set -euo pipefail

# shellcheck source=scripts/server-helpers.sh
source "$(dirname "$0")/server-helpers.sh"

if installed=$(find_binary mysqld) && ! "$installed" --version 2>/dev/null | grep -qi mariadb; then
  echo "$installed"
  exit 0
fi

cache=${JOBQ_MYSQL_DIR:-${TMPDIR:-/tmp}/jobq-mysql}
launcher="$cache/bin/mysqld"
[ -x "$launcher" ] && { echo "$launcher"; exit 0; }

fail() { echo "fetch-mysql: cannot fetch MySQL: $1" >&2; exit 1; }
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || fail "this machine has no apt-get/dpkg-deb (install Oracle MySQL's mysqld instead)"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || fail "$keyring is missing (apt-get install debian-archive-keyring)"
mkdir -p "$cache"
# Two fetches at once (CI starts several servers) would unpack over each other.
exec 9>"$cache/.lock"
flock 9
[ -x "$launcher" ] && { echo "$launcher"; exit 0; }

apt="$cache/apt"
root="$cache/root"
log="$cache/fetch.log"
rm -rf "$apt" "$root"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$root"
# Only sid's main component, and an empty dpkg status so that apt lists every library the server
# needs rather than trusting the (older) ones installed here.
echo "deb [signed-by=$keyring] http://deb.debian.org/debian sid main" >"$apt/sources.list"
: >"$apt/status"
apt_options=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::Etc::PreferencesParts=/dev/null -o "Dir::State::Lists=$apt/lists" -o "Dir::State::Status=$apt/status"
  -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1 -o APT::Architecture=amd64)
# apt-get update exits 0 when it could fetch nothing, so the lists themselves are checked.
apt-get "${apt_options[@]}" update >"$log" 2>&1 && compgen -G "$apt/lists/*_Packages*" >/dev/null ||
  fail "could not download Debian sid's package lists (is deb.debian.org reachable from here?); see $log"
# The server's own dependencies without perl (only its helper scripts use perl).
packages=$(apt-get "${apt_options[@]}" -s --no-install-recommends install mysql-server-core 2>>"$log" |
  awk '/^Inst / { print $2 }' | grep -v '^perl' || true)
[ -n "$packages" ] || fail "Debian sid offers no installable mysql-server-core; see $log"
# shellcheck disable=SC2086 # one word per package
(cd "$apt/debs" && apt-get "${apt_options[@]}" download $packages >>"$log" 2>&1) ||
  fail "downloading the packages failed; see $log"
for deb in "$apt/debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
rm -rf "$apt/debs" "$apt/cache"

libs="$root/usr/lib/x86_64-linux-gnu"
[ -x "$root/usr/sbin/mysqld" ] && [ -x "$libs/ld-linux-x86-64.so.2" ] || fail "the packages hold no usr/sbin/mysqld or loader; see $log"
mkdir -p "$cache/bin" "$cache/files"
# The options that point the server into the folder follow the first one, because --no-defaults
# (or --version) must come first. Debian's built-in secure-file-priv folder does not exist here.
cat >"$launcher.tmp" <<EOF
#!/bin/sh
# Oracle MySQL from $root, run through the loader and libraries fetched with it.
first=\$1
[ \$# -gt 0 ] && shift
exec "$libs/ld-linux-x86-64.so.2" --library-path "$libs" "$root/usr/sbin/mysqld" \$first \\
  --basedir="$root/usr" --lc-messages-dir="$root/usr/share/mysql" \\
  --character-sets-dir="$root/usr/share/mysql/charsets" --plugin-dir="$root/usr/lib/mysql/plugin" \\
  --secure-file-priv="$cache/files" "\$@"
EOF
chmod +x "$launcher.tmp"
"$launcher.tmp" --version >>"$log" 2>&1 || fail "the fetched mysqld does not run; see $log"
mv "$launcher.tmp" "$launcher"
echo "$launcher"
