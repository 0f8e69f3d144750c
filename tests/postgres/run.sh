#!/bin/bash
# tests/postgres/run.sh COMMAND [ARGS...]
#
# Runs COMMAND with GB_TEST_POSTGRES naming a throwaway PostgreSQL server:
# a cluster made here with initdb in a temporary dir, listening only on a
# unix socket in that dir (no TCP port), stopped and removed when COMMAND
# ends, whatever its outcome. PostgreSQL refuses to run as root, so as
# root the cluster runs as the postgres user (runuser). Needs Debian's
# postgresql package (make deps installs it). COMMAND's exit status is
# this script's.
set -u

bindir=""
for d in "$(pg_config --bindir 2>/dev/null)" /usr/lib/postgresql/*/bin; do
	if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
		bindir=$d
		break
	fi
done
if [ -z "$bindir" ]; then
	echo "tests/postgres/run.sh: no initdb/pg_ctl found: install the postgresql package" \
		"(make deps)" >&2
	exit 2
fi

dir=$(mktemp -d /tmp/gb-pg-XXXXXX)
as=()
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$dir"
	as=(runuser -u postgres --)
fi

cleanup() {
	"${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$((20000 + RANDOM % 20000))
if ! "${as[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale \
	>"$dir/initdb.log" 2>&1; then
	cat "$dir/initdb.log" >&2
	exit 2
fi
# unix socket only; fsync off: the cluster lives for one run
if ! "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 \
	-o "-c listen_addresses='' -c unix_socket_directories='$dir' -p $port -c fsync=off \
	-c max_connections=200" start >/dev/null; then
	cat "$dir/server.log" >&2
	exit 2
fi

export GB_TEST_POSTGRES="postgresql:///postgres?host=$dir&port=$port&user=postgres"
"$@"
