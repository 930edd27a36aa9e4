#!/usr/bin/env bash
# rhachet skill `act`: runs bhrain's agentic loop with full tools; every argument is passed through
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
exec node "$here/../../../../dist/bundle/act.js" "$@"
