#!/usr/bin/env bash
# Installs the @playwright/test versions of infra/playwright-versions (or of the list file given as
# the first argument) from the npm registry, each into $PLAYWRIGHT_VERSIONS_DIR/<version> (default
# .cache/playwright-versions in the repository: where the worker looks by default). No browser is
# downloaded: every version drives the service's Chromium. Idempotent: a version already installed
# is left as it is; a folder that holds no other version of the list is removed. Each version records
# video with the ffmpeg infra/ensure-browser.sh linked for the service's: it is linked again under
# the folder each version looks in ($PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<revision>).
#
#   bash infra/playwright-versions.sh [LIST]
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIST="${1:-$REPO_ROOT/infra/playwright-versions}"
DIR="${PLAYWRIGHT_VERSIONS_DIR:-$REPO_ROOT/.cache/playwright-versions}"

log() { echo "playwright-versions: $*" >&2; }

mapfile -t versions < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$LIST" | grep -v '^$' || true)
mkdir -p "$DIR"

installed() { grep -qF "\"version\": \"$1\"" "$DIR/$1/node_modules/@playwright/test/package.json" 2>/dev/null; }

install_one() {
  local version="$1" at="$DIR/$1"
  rm -rf "$at.partial" && mkdir -p "$at.partial"
  echo '{ "private": true }' >"$at.partial/package.json"
  if (cd "$at.partial" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --ignore-scripts \
    --loglevel=error --save-exact "@playwright/test@$version" >/dev/null 2>"$at.partial.log"); then
    rm -rf "$at" && mv "$at.partial" "$at" && rm -f "$at.partial.log"
  else
    log "could not install @playwright/test@$version: $(tail -n 3 "$at.partial.log" | tr '\n' ' ')"
    rm -rf "$at.partial"
    return 1
  fi
}

missing=()
for version in "${versions[@]}"; do installed "$version" || missing+=("$version"); done
# What the list no longer names goes (a folder of the list's versions only).
for folder in "$DIR"/*; do
  [ -d "$folder" ] || continue
  name="$(basename "$folder")"
  printf '%s\n' "${versions[@]}" | grep -qxF "$name" || { log "removing $name (not in the list)"; rm -rf "$folder"; }
done
failed=0
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing @playwright/test ${missing[*]} into $DIR"
  pids=()
  for version in "${missing[@]}"; do install_one "$version" & pids+=("$!"); done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
fi

BROWSERS="${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"
ffmpeg="$(find "$BROWSERS" -maxdepth 2 -path '*/ffmpeg-*/ffmpeg-linux' 2>/dev/null | head -n 1)"
if [ -n "$ffmpeg" ]; then
  ffmpeg="$(readlink -f "$ffmpeg")"
  # The ffmpeg revision of each installed version's playwright-core.
  node -e '
    const [dir, ...versions] = process.argv.slice(1);
    for (const v of versions) {
      try {
        const { browsers } = require(`${dir}/${v}/node_modules/playwright-core/browsers.json`);
        const ffmpeg = browsers.find((b) => b.name === "ffmpeg");
        if (ffmpeg) console.log(ffmpeg.revision);
      } catch {}
    }' "$DIR" "${versions[@]}" | sort -u | while read -r revision; do
    [ -e "$BROWSERS/ffmpeg-$revision/ffmpeg-linux" ] && continue
    mkdir -p "$BROWSERS/ffmpeg-$revision" && ln -sf "$ffmpeg" "$BROWSERS/ffmpeg-$revision/ffmpeg-linux"
  done
fi
exit "$failed"
