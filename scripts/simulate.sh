#!/usr/bin/env bash
# The deterministic simulator of issue #13: the real transition function, executor, claims,
# lifecycle and recovery, on a simulated clock, network and disk (journalled ext4, and ext4
# without a journal), against generated fault schedules with crashes and power cuts.
#
#   bash scripts/simulate.sh --seeds 10000 --from 1            # all cores, both disk models
#   bash scripts/simulate.sh --seeds 500 --from 7 --disk noJournal
#   bash scripts/simulate.sh --replay 1234 --disk noJournal    # one seed, with its trace and log
#
# The last line is `N schedules, M violations`; a violation prints its seed, the invariant and
# the shortest trace shrinking found. Exit status 0 when there is none.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"
cd "$(repo_root)"
ensure_swift_on_path
swift build -c release --product simulate >&2
exec "$(swift build -c release --show-bin-path)/simulate" "$@"
