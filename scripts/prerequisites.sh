#!/usr/bin/env bash
# What `make test` needs beyond the lock files, checked before anything else runs: python3 with
# venv, npm (htmx comes from package-lock.json), Chromium at /usr/bin/chromium (the browser tests;
# never a downloaded browser) and a Redis answering at the tests' URL (the worker tests).
# As root, what is missing is installed from Debian's packages and a local Redis is started; as
# any other user the script stops at once and prints the one command that installs it all.
# .ci/run and `make test` both call it; it changes nothing when all is there.
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
# The tests' Redis, as tests/redis_env.py reads it.
REDIS_URL_FOR_TESTS=${KUBEVIZ_TEST_REDIS_URL:-${REDIS_URL:-redis://127.0.0.1:6379/15}}

missing=()
command -v make >/dev/null || missing+=(make)
if ! command -v python3 >/dev/null; then
    missing+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    missing+=(python3-venv)
fi
command -v npm >/dev/null || missing+=(npm)
[ -x "$CHROMIUM" ] || missing+=(chromium)

# host and port of the Redis URL (redis://[user:pass@]host[:port][/db]), without python.
hostport=${REDIS_URL_FOR_TESTS#*://}
hostport=${hostport##*@}
hostport=${hostport%%/*}
redis_host=${hostport%%:*}
redis_port=6379
[ "$hostport" != "$redis_host" ] && redis_port=${hostport##*:}
redis_answers() { (exec 3<>"/dev/tcp/$redis_host/$redis_port") 2>/dev/null; }
local_redis=false
case "$redis_host" in 127.*|localhost) local_redis=true ;; esac
if ! redis_answers && $local_redis && ! command -v redis-server >/dev/null; then
    missing+=(redis-server)
fi

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "make test needs ${missing[*]}, which this machine lacks. Install with:" >&2
        echo "" >&2
        echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        echo "" >&2
        echo "then run make test again." >&2
        exit 1
    fi
    echo "prerequisites: installing ${missing[*]} (apt-get)"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    if [ ! -x "$CHROMIUM" ]; then
        echo "prerequisites: apt-get installed chromium, yet $CHROMIUM is not there" >&2
        exit 1
    fi
fi

if ! redis_answers; then
    if ! $local_redis; then
        echo "prerequisites: nothing answers at $REDIS_URL_FOR_TESTS (KUBEVIZ_TEST_REDIS_URL or REDIS_URL); start that Redis, or unset both for a local one" >&2
        exit 1
    fi
    # A throwaway local Redis: no persistence; the tests delete only their own keys.
    dir=${TMPDIR:-/tmp}/kubeviz-test-redis
    mkdir -p "$dir"
    echo "prerequisites: starting redis-server on $redis_host:$redis_port"
    redis-server --daemonize yes --bind "$redis_host" --port "$redis_port" --save "" --appendonly no \
        --dir "$dir" --logfile "$dir/redis.log"
    for _ in $(seq 50); do redis_answers && break; sleep 0.1; done
    if ! redis_answers; then
        echo "prerequisites: redis-server did not answer on $redis_host:$redis_port ($dir/redis.log)" >&2
        exit 1
    fi
fi
