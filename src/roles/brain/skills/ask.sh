#!/usr/bin/env bash
# rhachet skill `ask`: runs bhrain's agentic loop with read-only tools; every argument is passed through
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
exec node "$here/../../../../dist/bundle/ask.js" "$@"
