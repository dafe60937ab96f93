#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1 for testing deploy/dagster.yaml for real.
#
#   deploy/pg_throwaway.sh install        apt-get install PostgreSQL when its binaries are missing (root only)
#   deploy/pg_throwaway.sh bindir         print the directory holding initdb/pg_ctl, or fail saying why
#                                         (LIVESEARCH_PG_BINDIR overrides the search)
#   deploy/pg_throwaway.sh start          new cluster in a fresh temp dir, trust auth on loopback only,
#                                         a free port; prints two shell-assignable lines:
#                                           LIVESEARCH_PG_CLUSTER_DIR=/tmp/livesearch-pg.XXXXXX
#                                           LIVESEARCH_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:PORT/dagster
#   deploy/pg_throwaway.sh stop DIR       stop the cluster started in DIR and delete DIR
#
# initdb refuses to run as root, so as root every server command runs as the `postgres` system
# user (created by the Debian package). The cluster is for tests only: fsync is off.
set -euo pipefail

readonly CLUSTER_USER=postgres
readonly DATABASE=dagster

die() {
    echo "pg_throwaway: $*" >&2
    exit 1
}

find_bindir() {
    local candidate
    # An explicit choice (another major version, a non-Debian install) is used as given or fails.
    if [[ -n "${LIVESEARCH_PG_BINDIR:-}" ]]; then
        [[ -x "$LIVESEARCH_PG_BINDIR/initdb" && -x "$LIVESEARCH_PG_BINDIR/pg_ctl" ]] || return 1
        echo "$LIVESEARCH_PG_BINDIR"
        return 0
    fi
    if command -v pg_config >/dev/null 2>&1; then
        candidate="$(pg_config --bindir 2>/dev/null || true)"
        if [[ -n "$candidate" && -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]]; then
            echo "$candidate"
            return 0
        fi
    fi
    # Debian keeps server binaries off PATH, one directory per major version; take the newest.
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4 -n -r); do
        if [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]]; then
            echo "$candidate"
            return 0
        fi
    done
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v initdb)")"
        return 0
    fi
    return 1
}

as_cluster_user() {
    if [[ "$(id -u)" -eq 0 ]]; then
        id "$CLUSTER_USER" >/dev/null 2>&1 || die "running as root but there is no '$CLUSTER_USER' user to own the cluster"
        runuser -u "$CLUSTER_USER" -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

cmd_install() {
    if find_bindir >/dev/null; then
        echo "pg_throwaway: PostgreSQL already installed in $(find_bindir)" >&2
        return 0
    fi
    # A package install cannot repair an explicitly chosen directory.
    [[ -z "${LIVESEARCH_PG_BINDIR:-}" ]] || cmd_bindir >/dev/null
    [[ "$(id -u)" -eq 0 ]] || die "PostgreSQL is not installed and installing it needs root (apt-get install postgresql)"
    command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and there is no apt-get to install it"
    # The package would otherwise create and start a system-wide 'main' cluster we never use.
    mkdir -p /etc/postgresql-common
    if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
        echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >/dev/null \
        || die "apt-get install postgresql failed"
    find_bindir >/dev/null || die "apt-get installed postgresql but initdb/pg_ctl are still not found"
}

cmd_bindir() {
    if [[ -n "${LIVESEARCH_PG_BINDIR:-}" ]]; then
        find_bindir || die "LIVESEARCH_PG_BINDIR=$LIVESEARCH_PG_BINDIR holds no executable initdb and pg_ctl"
    else
        find_bindir || die "no PostgreSQL server binaries (initdb, pg_ctl) found via pg_config, in /usr/lib/postgresql/*/bin or on PATH"
    fi
}

cmd_start() {
    local bindir cluster port attempt
    bindir="$(cmd_bindir)"
    cluster="$(mktemp -d "${TMPDIR:-/tmp}/livesearch-pg.XXXXXX")"
    chmod 0755 "$cluster"
    if [[ "$(id -u)" -eq 0 ]]; then
        chown "$CLUSTER_USER" "$cluster"
    fi
    if ! as_cluster_user "$bindir/initdb" --pgdata="$cluster/data" --username=postgres \
        --auth-local=trust --auth-host=trust --encoding=UTF8 --locale=C.UTF-8 >"$cluster/initdb.log" 2>&1; then
        echo "pg_throwaway: initdb failed; its log:" >&2
        cat "$cluster/initdb.log" >&2
        rm -rf "$cluster"
        exit 1
    fi
    # A free port can be taken between choosing and binding it; try a few.
    for attempt in 1 2 3 4 5; do
        port="$(free_port)"
        if as_cluster_user "$bindir/pg_ctl" --pgdata="$cluster/data" --log="$cluster/server.log" --wait \
            --timeout=60 --silent \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $cluster -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start >/dev/null 2>&1; then
            if as_cluster_user "$bindir/createdb" --host=127.0.0.1 --port="$port" --username=postgres "$DATABASE"; then
                echo "LIVESEARCH_PG_CLUSTER_DIR=$cluster"
                echo "LIVESEARCH_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$port/$DATABASE"
                return 0
            fi
            as_cluster_user "$bindir/pg_ctl" --pgdata="$cluster/data" --mode=immediate --wait stop >/dev/null 2>&1 || true
            echo "pg_throwaway: createdb $DATABASE failed on port $port" >&2
            break
        fi
        echo "pg_throwaway: server did not start on port $port (attempt $attempt)" >&2
    done
    echo "pg_throwaway: giving up; server log:" >&2
    cat "$cluster/server.log" >&2 2>/dev/null || true
    rm -rf "$cluster"
    exit 1
}

cmd_stop() {
    local cluster="${1:-}" bindir
    [[ -n "$cluster" ]] || die "usage: pg_throwaway.sh stop CLUSTER_DIR"
    [[ -d "$cluster" ]] || return 0
    [[ "$(basename "$cluster")" == livesearch-pg.* ]] || die "refusing to delete $cluster: not a pg_throwaway cluster directory"
    if [[ -f "$cluster/data/postmaster.pid" ]]; then
        bindir="$(cmd_bindir)"
        as_cluster_user "$bindir/pg_ctl" --pgdata="$cluster/data" --mode=fast --wait --timeout=60 --silent stop \
            || die "pg_ctl stop failed for $cluster (server log: $cluster/server.log)"
    fi
    rm -rf "$cluster"
}

case "${1:-}" in
    install) cmd_install ;;
    bindir) cmd_bindir ;;
    start) cmd_start ;;
    stop) cmd_stop "${2:-}" ;;
    *) die "usage: pg_throwaway.sh install | bindir | start | stop CLUSTER_DIR" ;;
esac
