#!/usr/bin/env bash
# Installs everything Testrun needs on this machine and prepares the database. Idempotent: a second
# run only checks. Used by the README's two commands and by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
node_minor=$(node -p 'process.versions.node.split(".")[1]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ] || { [ "$node_major" -eq 20 ] && [ "$node_minor" -lt 19 ]; }; then
  say "Node.js 20.19 or newer is required (found $(node --version 2>/dev/null || echo none))"
  exit 1
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null | cut -d. -f1)" != "12" ]; then
  say "installing pnpm 12"
  npm install -g pnpm@12 >/dev/null 2>&1 || { say "could not install pnpm globally; run: npm install -g pnpm@12"; exit 1; }
fi

if [ -n "${CI:-}" ]; then pnpm install --frozen-lockfile --reporter=silent; else pnpm install --reporter=silent; fi
bash infra/local-services.sh
bash infra/ensure-browser.sh
# The other @playwright/test versions teams' bundles run on (docs/PLAYWRIGHT.md, "Playwright versions").
bash infra/playwright-versions.sh
# The sandbox's tests make system calls inside the sandbox with the system's python3 (only /usr is
# there: test/fixtures/hostile/syscalls.py); the service itself does not need it.
if [ ! -x /usr/bin/python3 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's python3 (the sandbox's tests)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 >/dev/null; }
  else
    say "/usr/bin/python3 is not installed: the sandbox's seccomp tests will fail (apt-get install -y python3)"
  fi
fi
# Generates the Prisma client and compiles every package to dist/ (a cache hit when nothing changed):
# the services, the migration runner and the testrun binary run the built JavaScript.
pnpm -s build --output-logs=errors-only
pnpm -s db:migrate
say "ready"
