#!/usr/bin/env bash
# A throwaway Redis server on 127.0.0.1, the Celery broker of the Celery test and of .ci/run.
#
#   deploy/redis_throwaway.sh install      apt-get install redis-server when it is missing (root only)
#   deploy/redis_throwaway.sh start        a server in a fresh temp dir on a free port, no persistence;
#                                          prints two shell-assignable lines:
#                                            LIVESEARCH_REDIS_DIR=/tmp/livesearch-redis.XXXXXX
#                                            LIVESEARCH_TEST_REDIS_URL=redis://127.0.0.1:PORT
#   deploy/redis_throwaway.sh stop DIR     stop the server started in DIR and delete DIR
#
# The server listens on the loopback address only, without a password (protected mode stays on),
# and never writes a dump: it holds a test's queue and nothing else.
set -euo pipefail

die() {
    echo "redis_throwaway: $*" >&2
    exit 1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

cmd_install() {
    command -v redis-server >/dev/null 2>&1 && return 0
    [[ "$(id -u)" -eq 0 ]] || die "redis-server is not installed and installing it needs root (apt-get install redis-server)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends redis-server >/dev/null \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends redis-server >/dev/null; } \
        || die "apt-get install redis-server failed"
    command -v redis-server >/dev/null 2>&1 || die "redis-server still missing after apt-get install"
}

cmd_start() {
    command -v redis-server >/dev/null 2>&1 || die "redis-server is not installed (deploy/redis_throwaway.sh install)"
    local dir port attempt
    dir="$(mktemp -d /tmp/livesearch-redis.XXXXXX)"
    # A free port can be taken between choosing and binding it; try a few.
    for attempt in 1 2 3; do
        port="$(free_port)"
        if redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" --appendonly no \
                --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null; then
            for _ in $(seq 50); do
                if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
                    echo "$port" >"$dir/port"
                    echo "LIVESEARCH_REDIS_DIR=$dir"
                    echo "LIVESEARCH_TEST_REDIS_URL=redis://127.0.0.1:$port"
                    return 0
                fi
                sleep 0.1
            done
            [[ -f "$dir/redis.pid" ]] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
        fi
        echo "redis_throwaway: attempt $attempt on port $port failed: $(tail -n 3 "$dir/redis.log" 2>/dev/null)" >&2
    done
    rm -rf "$dir"
    die "no Redis server started after 3 attempts"
}

cmd_stop() {
    local dir="${1:?usage: redis_throwaway.sh stop DIR}"
    [[ -d "$dir" && "$dir" == /tmp/livesearch-redis.* ]] || die "$dir is not a directory this script created"
    if [[ -f "$dir/port" ]]; then
        redis-cli -h 127.0.0.1 -p "$(cat "$dir/port")" shutdown nosave >/dev/null 2>&1 || true
    fi
    # shutdown answers before the process is gone; wait for it, then make sure.
    if [[ -f "$dir/redis.pid" ]]; then
        local pid
        pid="$(cat "$dir/redis.pid")"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill "$pid"
    fi
    rm -rf "$dir"
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) shift; cmd_stop "$@" ;;
    *) die "usage: $0 install | start | stop DIR" ;;
esac
