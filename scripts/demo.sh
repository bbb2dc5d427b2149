#!/usr/bin/env bash
# The README's first quick-start command: install, build, set up the tables in the local default
# database (mysql://root@127.0.0.1:3306/jobq unless JOBQ_DATABASE_URL says otherwise), run 2
# generators and 10 consumers for 10 seconds, then show the stats.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build --silent
./bin/jobq.js setup-tables
./bin/jobq.js start-processing --generators 2 --consumers 10 --duration "${DEMO_SECONDS:-10}"
./bin/jobq.js stats
