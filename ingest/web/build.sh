#!/usr/bin/env bash
# Builds the dashboard into WORK_DIR/dist: copies the app's sources into WORK_DIR (the source
# tree stays clean), installs the npm packages pinned by package-lock.json with `npm ci` (from
# npm's cache there when it has them, else from the registry; an unchanged lock file is not
# installed again), then runs Vite. Run by the build (ingest/web/dashboard.cmake) and by the
# dashboard's tests.
#
# Usage: ingest/web/build.sh WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
mkdir -p "$work"
export npm_config_cache="$work/npm-cache" npm_config_update_notifier=false

# The sources, mirrored (a file removed here is removed there).
rm -rf "$work/src" "$work/public" "$work/test"
cp -R "$here/src" "$work/src"
cp -R "$here/test" "$work/test"
if [[ -d "$here/public" ]]; then cp -R "$here/public" "$work/public"; fi
cp "$here/index.html" "$here/vite.config.ts" "$here/tsconfig.json" "$work/"

stamp="$work/node_modules/.leadflow-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  if ! (cd "$work" && npm ci --offline --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "installing the dashboard's npm packages from the registry" >&2
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  cp "$here/package-lock.json" "$stamp"
fi
cd "$work"
node node_modules/vite/bin/vite.js build --logLevel warn
