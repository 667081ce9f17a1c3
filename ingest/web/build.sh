#!/usr/bin/env bash
# Builds the dashboard into WORK_DIR/dist: copies the app's sources into WORK_DIR (the source
# tree stays clean), installs the npm packages pinned by package-lock.json (scripts/npm_ci.sh:
# from npm's cache there when it has them, else from the registry; an unchanged lock file is
# not installed again), then runs Vite. Run by the build (ingest/web/dashboard.cmake) and by the
# dashboard's tests.
#
# Usage: ingest/web/build.sh WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
mkdir -p "$work"

# The sources, mirrored (a file removed here is removed there).
rm -rf "$work/src" "$work/public" "$work/test"
cp -R "$here/src" "$work/src"
cp -R "$here/test" "$work/test"
if [[ -d "$here/public" ]]; then cp -R "$here/public" "$work/public"; fi
cp "$here/index.html" "$here/vite.config.ts" "$here/tsconfig.json" "$work/"

"$here/../../scripts/npm_ci.sh" "$here" "$work" "the dashboard's npm packages"
cd "$work"
node node_modules/vite/bin/vite.js build --logLevel warn
