#!/usr/bin/env bash
# Makes Postgres and Redis available for local development, tests and CI.
#
#   bash infra/local-services.sh
#
# Reads DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/testrun) and REDIS_URL
# (default redis://127.0.0.1:6379). When both answer, it only makes sure the database named in
# DATABASE_URL exists. When one does not answer and its URL points at this machine, it starts it,
# in this order of preference:
#   1. the Debian services, when installed (needs root or passwordless sudo);
#   2. apt-get install postgresql redis-server, then as 1 (needs root and apt-get);
#   3. docker compose -f infra/compose.yaml up -d postgres redis (needs a running Docker).
# A URL that points at another host is never started, only waited for a few seconds.
# Idempotent. Silent when there was nothing to do; otherwise one line per action, on stderr.
set -euo pipefail

DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/testrun}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
WAIT_SECONDS="${LOCAL_SERVICES_WAIT_SECONDS:-30}"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMPOSE_FILE="$REPO_ROOT/infra/compose.yaml"
HBA_MARKER="# testrun infra/local-services.sh: trust for local development"

log() { echo "local-services: $*" >&2; }
die() {
  echo "local-services: error: $*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------------------------------------
# URL parsing (bash only; percent-encoded user/password are passed through to libpq untouched)
# ---------------------------------------------------------------------------------------------

urldecode() {
  local s="${1//+/ }"
  printf '%b' "${s//%/\\x}"
}

# split "host:port", "[v6]:port", "host" -> PARSED_HOST PARSED_PORT (port may be empty)
split_hostport() {
  local hp="$1"
  PARSED_HOST="" PARSED_PORT=""
  if [[ "$hp" =~ ^\[([^]]*)\](:([0-9]*))?$ ]]; then
    PARSED_HOST="${BASH_REMATCH[1]}" PARSED_PORT="${BASH_REMATCH[3]}"
  elif [[ "$hp" =~ ^([^:]*)(:([0-9]*))?$ ]]; then
    PARSED_HOST="${BASH_REMATCH[1]}" PARSED_PORT="${BASH_REMATCH[3]}"
  else
    return 1
  fi
}

# postgresql://[user[:password]@]host[:port][/dbname][?params]
if [[ ! "$DATABASE_URL" =~ ^(postgres|postgresql)://([^@/?]*@)?([^/?]*)(/([^?]*))?(\?(.*))?$ ]]; then
  die "DATABASE_URL is not a postgresql://user@host:port/dbname URL: $DATABASE_URL"
fi
PG_SCHEME="${BASH_REMATCH[1]}"
PG_USERINFO="${BASH_REMATCH[2]}"
PG_HOSTPORT="${BASH_REMATCH[3]}"
PG_DB_RAW="${BASH_REMATCH[5]}"
PG_DB="$(urldecode "$PG_DB_RAW")"
PG_QUERY="${BASH_REMATCH[7]}"
split_hostport "$PG_HOSTPORT" || die "cannot read host and port from DATABASE_URL: $DATABASE_URL"
PG_HOST="$PARSED_HOST"
PG_PORT="${PARSED_PORT:-5432}"
PG_USER="$(urldecode "${PG_USERINFO%@}")"
PG_USER="${PG_USER%%:*}"
PG_USER="${PG_USER:-postgres}"
[[ -n "$PG_DB" ]] || PG_DB="$PG_USER" # libpq's default: the database named like the user

# libpq refuses query parameters it does not know (Prisma adds ?schema=, connection_limit=, ...):
# keep only the ones psql/pg_isready understand.
PG_LIBPQ_QUERY=""
if [[ -n "$PG_QUERY" ]]; then
  IFS='&' read -r -a _pg_params <<<"$PG_QUERY"
  for _p in "${_pg_params[@]}"; do
    case "${_p%%=*}" in
      host | hostaddr | port | sslmode | sslrootcert | sslcert | sslkey | sslpassword | connect_timeout | options | application_name | target_session_attrs | gssencmode | passfile)
        PG_LIBPQ_QUERY="${PG_LIBPQ_QUERY:+$PG_LIBPQ_QUERY&}$_p"
        ;;
    esac
  done
fi
pg_url_for() { # pg_url_for DBNAME -> the same server and credentials, another database
  echo "${PG_SCHEME}://${PG_USERINFO}${PG_HOSTPORT}/$1${PG_LIBPQ_QUERY:+?$PG_LIBPQ_QUERY}"
}
PG_CONN="$(pg_url_for "${PG_DB_RAW:-$PG_DB}")"
PG_ADMIN_CONN="$(pg_url_for postgres)"

# redis[s]://[user[:password]@]host[:port][/db]
if [[ ! "$REDIS_URL" =~ ^(redis|rediss)://([^@/?]*@)?([^/?]*)(/.*)?$ ]]; then
  die "REDIS_URL is not a redis://host:port URL: $REDIS_URL"
fi
REDIS_SCHEME="${BASH_REMATCH[1]}"
split_hostport "${BASH_REMATCH[3]}" || die "cannot read host and port from REDIS_URL: $REDIS_URL"
REDIS_HOST="${PARSED_HOST:-127.0.0.1}"
REDIS_PORT="${PARSED_PORT:-6379}"

is_local_host() {
  case "$1" in
    "" | localhost | 127.0.0.1 | ::1 | 0.0.0.0) return 0 ;;
    *) return 1 ;;
  esac
}
tcp_host() { # the address bash's /dev/tcp should dial
  case "$1" in
    "" | localhost) echo 127.0.0.1 ;;
    *) echo "$1" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# Probes
# ---------------------------------------------------------------------------------------------

tcp_open() { # tcp_open HOST PORT
  timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$(tcp_host "$1")" "$2" 2>/dev/null
}

pg_answers() {
  if have pg_isready; then
    PGCONNECT_TIMEOUT=3 pg_isready -q -t 3 -d "$PG_CONN" >/dev/null 2>&1
  elif [[ -z "$PG_HOST" ]]; then
    # Unix socket and no client tools: look for the socket file.
    local dir="/var/run/postgresql"
    [[ "&$PG_QUERY&" =~ \&host=([^\&]*)\& ]] && dir="$(urldecode "${BASH_REMATCH[1]}")"
    [[ -S "$dir/.s.PGSQL.$PG_PORT" ]]
  else
    tcp_open "$PG_HOST" "$PG_PORT"
  fi
}

redis_answers() {
  if have redis-cli; then
    local tls=()
    [[ "$REDIS_SCHEME" == rediss ]] && tls=(--tls)
    local reply
    reply="$(timeout 5 redis-cli "${tls[@]}" -u "$REDIS_URL" --no-auth-warning ping 2>&1)" || true
    # PONG, or an error that proves a Redis is there (NOAUTH, WRONGPASS, LOADING...)
    [[ "$reply" =~ (^|$'\n')(\(error\)\ )?(PONG|NOAUTH|WRONGPASS|LOADING|MISCONF|ERR\ ) ]]
  elif [[ "$REDIS_SCHEME" == rediss ]]; then
    tcp_open "$REDIS_HOST" "$REDIS_PORT"
  else
    timeout 3 bash -c '
      exec 3<>"/dev/tcp/$1/$2" || exit 1
      printf "PING\r\n" >&3
      IFS= read -r -t 2 reply <&3 || exit 1
      [[ "$reply" == +PONG* || "$reply" == -* ]]
    ' _ "$(tcp_host "$REDIS_HOST")" "$REDIS_PORT" 2>/dev/null
  fi
}

wait_for() { # wait_for PROBE_FUNCTION
  local probe="$1" deadline=$((SECONDS + WAIT_SECONDS))
  until "$probe"; do
    if ((SECONDS >= deadline)); then
      return 1
    fi
    sleep 1
  done
}

# ---------------------------------------------------------------------------------------------
# Privileges
# ---------------------------------------------------------------------------------------------

SUDO=()
CAN_ROOT=false
if [[ "$(id -u)" -eq 0 ]]; then
  CAN_ROOT=true
elif have sudo && sudo -n true >/dev/null 2>&1; then
  CAN_ROOT=true
  SUDO=(sudo -n)
fi
as_root() { "${SUDO[@]}" "$@"; }

# ---------------------------------------------------------------------------------------------
# Debian services
# ---------------------------------------------------------------------------------------------

# Installed: Debian's postgresql-common wrappers plus a server; its cluster may still be missing.
pg_installed() { have pg_ctlcluster && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }
redis_installed() { have redis-server; }

pg_version() { # the configured major version (the newest, if several), else the newest installed
  local dir
  for dir in /etc/postgresql /usr/lib/postgresql; do
    if [[ -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
      find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1
      return
    fi
  done
}

# Let every local connection in without a password, for a cluster this script (or the apt-get
# install it ran) has just created. Never applied to a cluster that was there before.
trust_local_connections() {
  local hba="$1"
  if ! grep -qF "$HBA_MARKER" "$hba"; then
    local tmp
    tmp="$(mktemp)"
    {
      echo "$HBA_MARKER"
      echo "local   all   all                  trust"
      echo "host    all   all   127.0.0.1/32   trust"
      echo "host    all   all   ::1/128        trust"
      echo
      cat "$hba"
    } >"$tmp"
    as_root cp "$tmp" "$hba"
    rm -f "$tmp"
    log "set trust authentication for local connections in $hba (fresh cluster)"
  fi
}

start_debian_postgres() { # start_debian_postgres FRESH(true|false)
  local fresh="$1" ver
  ver="$(pg_version)"
  if [[ ! -f "/etc/postgresql/$ver/main/postgresql.conf" ]]; then
    as_root pg_createcluster "$ver" main >/dev/null
    log "created PostgreSQL $ver cluster 'main'"
    fresh=true
  fi
  if [[ "$fresh" == true ]]; then
    trust_local_connections "/etc/postgresql/$ver/main/pg_hba.conf"
  fi
  if as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main status >/dev/null 2>&1; then
    # already running (for example started by the package's postinst): pick up pg_hba changes
    if [[ "$fresh" == true ]]; then
      as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main reload >/dev/null
      log "reloaded PostgreSQL $ver cluster 'main'"
    fi
  else
    as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start
    log "started PostgreSQL $ver cluster 'main'"
  fi
}

start_debian_redis() {
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log >/dev/null
  log "started redis-server on 127.0.0.1:6379"
}

# ---------------------------------------------------------------------------------------------
# Docker
# ---------------------------------------------------------------------------------------------

COMPOSE=()
docker_usable() {
  have docker || return 1
  timeout 20 docker info >/dev/null 2>&1 || return 1
  # Compose v2 (the docker CLI plugin): infra/compose.yaml uses its top-level `name`.
  docker compose version >/dev/null 2>&1 || return 1
  COMPOSE=(docker compose)
}

# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

need_pg=false
need_redis=false
pg_answers || need_pg=true
redis_answers || need_redis=true

if [[ "$need_pg" == true ]] && ! is_local_host "$PG_HOST"; then
  wait_for pg_answers ||
    die "Postgres at $PG_HOST:$PG_PORT (DATABASE_URL) does not answer. It is not on this machine, so this script will not start it: check the URL, the network and the server."
  need_pg=false
fi
if [[ "$need_redis" == true ]] && ! is_local_host "$REDIS_HOST"; then
  wait_for redis_answers ||
    die "Redis at $REDIS_HOST:$REDIS_PORT (REDIS_URL) does not answer. It is not on this machine, so this script will not start it: check the URL, the network and the server."
  need_redis=false
fi
if [[ "$need_pg" == true && "$PG_PORT" != 5432 ]]; then
  die "nothing answers on local port $PG_PORT (DATABASE_URL); this script only starts Postgres on 5432. Start yours on $PG_PORT, or point DATABASE_URL at port 5432."
fi
if [[ "$need_redis" == true && "$REDIS_PORT" != 6379 ]]; then
  die "nothing answers on local port $REDIS_PORT (REDIS_URL); this script only starts Redis on 6379. Start yours on $REDIS_PORT, or point REDIS_URL at port 6379."
fi

started_with_docker=false
if [[ "$need_pg" == true || "$need_redis" == true ]]; then
  debian_ready=true
  [[ "$need_pg" == true ]] && ! pg_installed && debian_ready=false
  [[ "$need_redis" == true ]] && ! redis_installed && debian_ready=false

  if [[ "$debian_ready" == true && "$CAN_ROOT" == true ]]; then
    [[ "$need_pg" == true ]] && start_debian_postgres false
    [[ "$need_redis" == true ]] && start_debian_redis
  elif [[ "$CAN_ROOT" == true ]] && have apt-get; then
    pkgs=()
    pg_fresh=false
    if [[ "$need_pg" == true ]] && ! pg_installed; then
      pkgs+=(postgresql)
      pg_fresh=true # the cluster apt-get is about to create is ours to configure
    fi
    [[ "$need_redis" == true ]] && ! redis_installed && pkgs+=(redis-server)
    log "installing ${pkgs[*]} with apt-get"
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
    # The packages' own scripts may have started the services already.
    if [[ "$need_pg" == true ]]; then
      if [[ "$pg_fresh" == true ]] || ! pg_answers; then start_debian_postgres "$pg_fresh"; fi
    fi
    if [[ "$need_redis" == true ]] && ! redis_answers; then start_debian_redis; fi
  elif docker_usable; then
    services=()
    [[ "$need_pg" == true ]] && services+=(postgres)
    [[ "$need_redis" == true ]] && services+=(redis)
    compose_out="$(mktemp)"
    if ! "${COMPOSE[@]}" -f "$COMPOSE_FILE" up -d "${services[@]}" >"$compose_out" 2>&1; then
      cat "$compose_out" >&2
      rm -f "$compose_out"
      die "'${COMPOSE[*]} -f infra/compose.yaml up -d ${services[*]}' failed (output above)"
    fi
    rm -f "$compose_out"
    log "started ${services[*]} with ${COMPOSE[*]} -f infra/compose.yaml"
    started_with_docker=true
  else
    missing=""
    [[ "$need_pg" == true ]] && missing="Postgres at ${PG_HOST:-local socket}:$PG_PORT (DATABASE_URL)"
    [[ "$need_redis" == true ]] && missing="${missing:+$missing and }Redis at $REDIS_HOST:$REDIS_PORT (REDIS_URL)"
    why=""
    if [[ "$debian_ready" == true ]]; then
      why="The Debian services are installed but starting them needs root (or passwordless sudo)."
    elif [[ "$CAN_ROOT" != true ]]; then
      why="Installing them needs root (or passwordless sudo) and apt-get."
    else
      why="apt-get is not available to install them."
    fi
    die "$(
      printf '%s: nothing answers, and this script cannot start %s. %s Docker is not usable either (%s). Do one of:\n' \
        "$missing" "$([[ "$need_pg" == true && "$need_redis" == true ]] && echo them || echo it)" "$why" \
        "$(have docker && echo "'docker info' fails: is the daemon running, may this user use it, is the compose v2 plugin installed?" || echo "no docker command")"
      printf '  - point DATABASE_URL / REDIS_URL at a Postgres 15+ and a Redis 7+ you already have;\n'
      printf '  - install them (Debian/Ubuntu, as root: apt-get install -y postgresql redis-server) and run this script again as root;\n'
      printf '  - start Docker and run this script again (it runs: docker compose -f infra/compose.yaml up -d postgres redis).'
    )"
  fi

  if [[ "$need_pg" == true ]]; then
    wait_for pg_answers ||
      die "Postgres was started but does not answer at $PG_HOST:$PG_PORT after ${WAIT_SECONDS}s$([[ "$started_with_docker" == true ]] && echo "; see: ${COMPOSE[*]} -f infra/compose.yaml logs postgres")"
  fi
  if [[ "$need_redis" == true ]]; then
    wait_for redis_answers ||
      die "Redis was started but does not answer at $REDIS_HOST:$REDIS_PORT after ${WAIT_SECONDS}s$([[ "$started_with_docker" == true ]] && echo "; see: ${COMPOSE[*]} -f infra/compose.yaml logs redis")"
  fi
fi

# ---------------------------------------------------------------------------------------------
# The database named in DATABASE_URL
# ---------------------------------------------------------------------------------------------

sql_literal() { printf "'%s'" "${1//\'/\'\'}"; }
sql_ident() { printf '"%s"' "${1//\"/\"\"}"; }

# Runs SQL against the server's "postgres" database, with psql, else node + the repo's `pg`,
# else psql inside the compose service. Prints the query's rows unaligned.
admin_sql() {
  local sql="$1"
  if have psql; then
    PGCONNECT_TIMEOUT=10 psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$PG_ADMIN_CONN" -c "$sql"
  elif have node && node -e "require.resolve('pg',{paths:process.argv.slice(1)})" \
    "$REPO_ROOT" "$REPO_ROOT/packages/core" "$REPO_ROOT/node_modules/.pnpm/node_modules" >/dev/null 2>&1; then
    PGUSER="${PGUSER:-${USER:-$(id -un)}}" PG_ADMIN_CONN="$PG_ADMIN_CONN" SQL="$sql" node -e '
      const { Client } = require(require.resolve("pg", { paths: process.argv.slice(1) }));
      const c = new Client({ connectionString: process.env.PG_ADMIN_CONN, connectionTimeoutMillis: 10000 });
      c.connect()
        .then(() => c.query(process.env.SQL))
        .then((r) => { for (const row of r.rows || []) console.log(Object.values(row).join("|")); return c.end(); })
        .catch((e) => { console.error(e.message); process.exit(1); });
    ' "$REPO_ROOT" "$REPO_ROOT/packages/core" "$REPO_ROOT/node_modules/.pnpm/node_modules"
  elif docker_usable && [[ -n "$("${COMPOSE[@]}" -f "$COMPOSE_FILE" ps -q postgres 2>/dev/null)" ]]; then
    "${COMPOSE[@]}" -f "$COMPOSE_FILE" exec -T postgres psql -X -q -t -A -v ON_ERROR_STOP=1 -U "$PG_USER" -d postgres -c "$sql"
  else
    die "cannot check that database '$PG_DB' exists: neither psql (apt-get install postgresql-client) nor the repo's node 'pg' package (pnpm install) is available"
  fi
}

db_exists() {
  [[ "$(admin_sql "SELECT 1 FROM pg_database WHERE datname = $(sql_literal "$PG_DB")")" == 1 ]]
}

if ! db_exists; then
  if ! admin_sql "CREATE DATABASE $(sql_ident "$PG_DB")" >/dev/null 2>"${TMPDIR:-/tmp}/local-services.$$.err"; then
    # another process may have created it meanwhile
    if ! db_exists; then
      cat "${TMPDIR:-/tmp}/local-services.$$.err" >&2
      rm -f "${TMPDIR:-/tmp}/local-services.$$.err"
      die "could not create database '$PG_DB' on $PG_HOST:$PG_PORT"
    fi
  else
    log "created database '$PG_DB' on ${PG_HOST:-local socket}:$PG_PORT"
  fi
  rm -f "${TMPDIR:-/tmp}/local-services.$$.err"
fi
