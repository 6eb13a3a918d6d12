#!/usr/bin/env bash
# Copies what one production image needs out of a built workspace into OUT, keeping the
# repository's layout (so paths that code derives from its own location, such as
# prisma/migrations and apps/api/assets, hold in the image as in a checkout):
#
#   bash infra/assemble-runtime.sh OUT PACKAGE...      e.g. OUT=/out PACKAGE=@testrun/api
#
# Run it after `pnpm build` and a production install of the same packages (pnpm install --prod
# --filter 'PACKAGE...'). For each PACKAGE and every workspace package it depends on, it copies
# package.json, node_modules and the entries of its "files" field (dist/, bin/, assets/); besides
# those, the root manifest and node_modules (pnpm's store of the installed dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."

out="$1"
shift
filters=()
for package in "$@"; do filters+=(--filter "$package..."); done

mkdir -p "$out"
cp -a --parents package.json node_modules "$out"

# Directories of the selected packages and their workspace dependencies, from pnpm itself.
dirs="$(pnpm "${filters[@]}" list --depth -1 --json | node -e '
  const root = process.cwd();
  const listed = JSON.parse(require("fs").readFileSync(0, "utf8"));
  for (const { path: dir } of listed) if (dir !== root) console.log(require("path").relative(root, dir));
')"

for dir in $dirs; do
  cp -a --parents "$dir/package.json" "$out"
  if [[ -d "$dir/node_modules" ]]; then cp -a --parents "$dir/node_modules" "$out"; fi
  for entry in $(node -p "(require('./$dir/package.json').files || []).join('\n')"); do
    if [[ -e "$dir/$entry" ]]; then cp -a --parents "$dir/$entry" "$out"; fi
  done
done
