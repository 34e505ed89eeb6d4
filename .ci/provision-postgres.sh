#!/usr/bin/env bash
# Makes the machine's PostgreSQL server ready for the origin's server-side test suite:
# running, with the pgvector extension available and an empty test database.
# Idempotent: every step is skipped when its result is already there.
set -euo pipefail

PGHOST=127.0.0.1
PGPORT=5432
TEST_DB=${TEST_DB:-vip_test}

if ! pg_isready -h "$PGHOST" -p "$PGPORT" -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  for _ in $(seq 1 30); do pg_isready -h "$PGHOST" -p "$PGPORT" -q && break; sleep 1; done
fi

has_vector() {
  [ "$(psql -h "$PGHOST" -U postgres -tAc "select count(*) from pg_available_extensions where name = 'vector'")" = "1" ]
}

if ! has_vector; then
  # bookworm has no pgvector package for PostgreSQL 15: build trixie's source package against it.
  pg_major=$(ls /etc/postgresql | sort -n | tail -1)
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" \
    > /etc/apt/sources.list.d/trixie-src.sources
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$pg_major" dpkg-dev make gcc >/dev/null
  build_dir=$(mktemp -d)
  (cd "$build_dir" && apt-get source -qq pgvector >/dev/null 2>&1 && cd pgvector-*/ && make -s >/dev/null && make -s install >/dev/null)
  rm -rf "$build_dir"
  has_vector || { echo "pgvector build failed" >&2; exit 1; }
fi

# Created once and never dropped: a second run (or a developer's) beside a running suite must not
# pull the database from under it. Each test makes and drops its own database through this one.
if [ -z "$(psql -h "$PGHOST" -U postgres -tAc "select 1 from pg_database where datname = '$TEST_DB'")" ]; then
  psql -h "$PGHOST" -U postgres -qc "create database $TEST_DB" >/dev/null
fi
echo "postgres://postgres@$PGHOST:$PGPORT/$TEST_DB"
