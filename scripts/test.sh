#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (unit and
# integration). Exits with `swift test`'s exit code. Extra arguments go to
# `swift test` (e.g. scripts/test.sh --filter HarnessTests).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"
cd "$(repo_root)"

bash scripts/install-deps.sh
ensure_swift_on_path

# Integration tests run the `uploader` executable: build it and the tests first
# (--build-tests builds every target, the executable included).
swift build --build-tests

status=0
swift test --skip-build "$@" || status=$?
exit "$status"
