#!/usr/bin/env bash
# Makes a Chromium available to Playwright, bubblewrap to run it in a network namespace of its own,
# and the ffmpeg Playwright needs to record video.
#
#   bash infra/ensure-browser.sh        (after pnpm install)
#
# Chromium, first one that works:
#   1. Playwright's own chromium (installed by `playwright install chromium`): nothing to do;
#   2. ${CHROMIUM_PATH:-/usr/bin/chromium}: nothing to do (the worker uses it);
#   3. as root with apt-get: apt-get install -y chromium fonts-liberation (and
#      chromium-headless-shell, which headless runs use when it is there);
#   4. `playwright install chromium` with the repo's own Playwright (needs internet access to
#      Playwright's download host);
#   else fail, saying what to do.
# bubblewrap: apt-get installs it as root; otherwise a warning (the worker will not start without it
# unless BROWSER_NETWORK_ISOLATION=off), and another when it cannot make namespaces here.
# Video: Playwright's recordVideo runs $PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<revision>/ffmpeg-linux
# (default browsers path ~/.cache/ms-playwright). When that file is missing, link Debian's ffmpeg
# there (apt-get installing it first when root). A missing ffmpeg is only a warning.
# Idempotent. Silent when there was nothing to do; otherwise one line per action, on stderr.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"

log() { echo "ensure-browser: $*" >&2; }
warn() { echo "ensure-browser: warning: $*" >&2; }
die() {
  echo "ensure-browser: error: $*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

SUDO=()
CAN_ROOT=false
if [[ "$(id -u)" -eq 0 ]]; then
  CAN_ROOT=true
elif have sudo && sudo -n true >/dev/null 2>&1; then
  CAN_ROOT=true
  SUDO=(sudo -n)
fi
as_root() { "${SUDO[@]}" "$@"; }

# apt-get install, refreshing the package lists once if they are stale or absent.
APT_UPDATED=false
apt_install() {
  if as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1; then
    return 0
  fi
  if [[ "$APT_UPDATED" != true ]]; then
    as_root apt-get update -qq >/dev/null
    APT_UPDATED=true
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# Find the repo's playwright-core (pnpm does not hoist it to the root: it comes with
# apps/worker's `playwright`).
# ---------------------------------------------------------------------------------------------
PW_CORE=""
if have node; then
  PW_CORE="$(
    node -e '
      const path = require("path");
      const root = process.argv[1];
      const paths = [root, path.join(root, "apps/worker"), path.join(root, "node_modules/.pnpm/node_modules")];
      const tryResolve = (id, from) => { try { return require.resolve(id, { paths: from }); } catch { return null; } };
      let pkg = tryResolve("playwright-core/package.json", paths);
      if (!pkg) {
        const pw = tryResolve("playwright/package.json", paths);
        if (pw) pkg = tryResolve("playwright-core/package.json", [path.dirname(pw)]);
      }
      if (pkg) console.log(path.dirname(pkg));
    ' "$REPO_ROOT" 2>/dev/null
  )" || true
fi
if [[ -z "$PW_CORE" ]]; then
  warn "playwright-core not found under $REPO_ROOT (run pnpm install first); only the system Chromium is checked"
fi

# Prints the path of one of Playwright's executables ("chromium", "ffmpeg"), asking Playwright's
# own registry, or computing it from browsers.json the way Playwright does on Linux.
pw_executable() {
  [[ -n "$PW_CORE" ]] || return 1
  node -e '
    const fs = require("fs"), path = require("path"), os = require("os");
    const [core, name] = process.argv.slice(1);
    try {
      if (name === "chromium") { console.log(require(core).chromium.executablePath()); process.exit(0); }
      const reg = require(path.join(core, "lib/coreBundle.js")).registry.registry;
      const exe = reg.findExecutable(name).executablePath();
      if (exe) { console.log(exe); process.exit(0); }
    } catch {}
    if (process.platform !== "linux" || name !== "ffmpeg") process.exit(1);
    const browsers = JSON.parse(fs.readFileSync(path.join(core, "browsers.json"), "utf8")).browsers;
    const ffmpeg = browsers.find((b) => b.name === "ffmpeg");
    const env = process.env.PLAYWRIGHT_BROWSERS_PATH;
    let dir = env === "0" ? path.join(core, ".local-browsers")
      : env || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "ms-playwright");
    dir = path.resolve(process.env.INIT_CWD || process.cwd(), dir);
    console.log(path.join(dir, "ffmpeg-" + ffmpeg.revision, "ffmpeg-linux"));
  ' "$PW_CORE" "$1" 2>/dev/null
}

pw_install() { # pw_install NAME...: Playwright's own installer, from the repo's playwright-core
  (cd "$REPO_ROOT" && node "$PW_CORE/cli.js" install "$@")
}

# ---------------------------------------------------------------------------------------------
# Chromium
# ---------------------------------------------------------------------------------------------
PW_CHROMIUM_INSTALLED=false
pw_chromium="$(pw_executable chromium || true)"
if [[ -n "$pw_chromium" && -x "$pw_chromium" ]]; then
  PW_CHROMIUM_INSTALLED=true
elif [[ -x "$CHROMIUM" ]]; then
  : # the system Chromium; the worker uses it (CHROMIUM_PATH)
elif [[ "$CAN_ROOT" == true ]] && have apt-get; then
  log "installing Debian's chromium and fonts-liberation with apt-get"
  apt_install chromium fonts-liberation ||
    die "apt-get install chromium fonts-liberation failed"
  if [[ ! -x "$CHROMIUM" ]]; then
    [[ -x /usr/bin/chromium ]] || die "apt-get installed chromium, but /usr/bin/chromium is not there"
    warn "Chromium is at /usr/bin/chromium, not at CHROMIUM_PATH=$CHROMIUM: fix CHROMIUM_PATH"
  fi
elif [[ -n "$PW_CORE" ]] && log "no Chromium found: trying 'playwright install chromium'" && pw_install chromium >&2; then
  PW_CHROMIUM_INSTALLED=true
else
  die "no Chromium for Playwright. Do one of:
  - install Playwright's browser (needs internet): pnpm exec playwright install chromium   (from apps/worker)
  - install a system Chromium (Debian/Ubuntu, as root): apt-get install -y chromium fonts-liberation
  - point CHROMIUM_PATH at an existing Chromium/Chrome executable (now: $CHROMIUM, which does not exist)"
fi

# Chromium's headless shell: what Playwright runs headless Chromium on (its chromium-headless-shell
# download), and the worker too when it is there (CHROMIUM_HEADLESS_SHELL_PATH, and Playwright runs
# in the sandbox). About a third of the full browser's CPU; without it the full Chromium runs.
if [[ "$PW_CHROMIUM_INSTALLED" == false && ! -x /usr/lib/chromium/chromium-headless-shell ]] &&
  [[ "$CAN_ROOT" == true ]] && have apt-get && [[ -x /usr/lib/chromium/chromium ]]; then
  log "installing Debian's chromium-headless-shell with apt-get (headless runs)"
  apt_install chromium-headless-shell ||
    warn "apt-get install chromium-headless-shell failed: headless runs use the full Chromium"
fi

# ---------------------------------------------------------------------------------------------
# bubblewrap: the worker runs Chromium in a network namespace of its own whose only way out is its
# egress proxy, and does not start without one unless BROWSER_NETWORK_ISOLATION=off
# (docs/NETWORK_POLICY.md, "Browser isolation").
# ---------------------------------------------------------------------------------------------
if ! have bwrap; then
  if [[ "$CAN_ROOT" == true ]] && have apt-get; then
    log "installing bubblewrap with apt-get (Chromium's network namespace)"
    apt_install bubblewrap || die "apt-get install bubblewrap failed"
  else
    warn "bubblewrap (bwrap) is not installed: the worker will not start until it is (apt-get install -y bubblewrap), or with BROWSER_NETWORK_ISOLATION=off"
  fi
fi
if have bwrap && ! bwrap_error="$(bwrap --unshare-net --unshare-pid --die-with-parent --cap-drop ALL --dev-bind / / -- /bin/sh -c : 2>&1)"; then
  warn "bwrap cannot create a network namespace here (${bwrap_error:-no reason given}): the worker will not start until it can (user namespaces allowed, or run it as root), or with BROWSER_NETWORK_ISOLATION=off"
fi

# ---------------------------------------------------------------------------------------------
# ffmpeg for recordVideo (optional)
# ---------------------------------------------------------------------------------------------
ffmpeg_target="$(pw_executable ffmpeg || true)"
if [[ -z "$ffmpeg_target" ]]; then
  [[ -z "$PW_CORE" ]] || warn "cannot tell where Playwright expects ffmpeg: video recording may not work"
  exit 0
fi
if [[ -x "$ffmpeg_target" ]]; then
  exit 0
fi

system_ffmpeg="$(command -v ffmpeg || true)"
if [[ -z "$system_ffmpeg" && "$CAN_ROOT" == true ]] && have apt-get; then
  log "installing Debian's ffmpeg with apt-get (for video recording)"
  if apt_install ffmpeg; then
    system_ffmpeg="$(command -v ffmpeg || true)"
  else
    warn "apt-get install ffmpeg failed"
  fi
fi

if [[ -n "$system_ffmpeg" ]]; then
  ffmpeg_dir="$(dirname "$ffmpeg_target")"
  # (Playwright's installer deletes browser directories without the marker file as stale.)
  if mkdir -p "$ffmpeg_dir" 2>/dev/null && ln -sfn "$system_ffmpeg" "$ffmpeg_target" 2>/dev/null &&
    touch "$ffmpeg_dir/INSTALLATION_COMPLETE" 2>/dev/null; then
    log "linked $system_ffmpeg to $ffmpeg_target (Playwright video recording)"
  else
    warn "cannot write $ffmpeg_target: runs will have no video recording. Set PLAYWRIGHT_BROWSERS_PATH to a writable directory, or link $system_ffmpeg there yourself"
  fi
elif [[ "$PW_CHROMIUM_INSTALLED" == true ]] && pw_install ffmpeg >/dev/null 2>&1 && [[ -x "$ffmpeg_target" ]]; then
  log "installed Playwright's ffmpeg (video recording)"
else
  warn "no ffmpeg at $ffmpeg_target: runs will have no video recording (traces still work). Install ffmpeg (apt-get install -y ffmpeg) and run this script again, or run: pnpm exec playwright install ffmpeg"
fi
