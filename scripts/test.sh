#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (unit and
# integration). Exits non-zero when any test fails; prints the elapsed time last.
# Extra arguments go to one plain `swift test` (e.g. scripts/test.sh --filter HarnessTests).
#
# The whole suite runs as `swift test` lanes at once, on the one debug build. Swift Testing runs
# a process's tests on a thread pool as wide as the machine has cores, and a test that waits on a
# daemon or a server holds its thread while it waits: on two cores, two at a time. So:
#   xctest      the XCTest cases, one after another (they were written to run alone), shown as they run;
#   bulk        the XCTest classes that move gibibytes (HostileSizesTests, DropAndArriveTests), beside them;
#   integration the Swift Testing suites of IntegrationTests but the three below;
#   servers     S3UploadTests, TusUploadTests, FieldDeploymentTests: each runs its tests one by one;
#   core        UploaderCoreTests;
#   simulator   SimulationTests, which only compute, at a lower CPU priority;
#   package     DebianPackageTests, which needs a release build of its own: that build starts before
#               the debug build, at the simulator's priority, so it takes what the tests leave idle,
#               and the lane starts when it is done (the test's own build then has nothing to compile).
# The other lanes' outputs follow the XCTest lane's when they end; the elapsed time is the last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"
cd "$(repo_root)"
started=$SECONDS

elapsed() {
    local s=$((SECONDS - started))
    printf 'test.sh: %dm%02ds\n' $((s / 60)) $((s % 60))
}

bash scripts/install-deps.sh
ensure_swift_on_path

if [ $# -gt 0 ]; then
    swift build --build-tests
    status=0
    swift test --skip-build "$@" || status=$?
    elapsed
    exit "$status"
fi

lanes=.build/test-lanes
mkdir -p "$lanes"
rm -f "$lanes"/*.log

# Compute-only work runs at this priority, below the tests that wait on real servers.
background_nice=10

# The release build DebianPackageTests makes (its scratch path, the script's flags), in a
# process group of its own (job control on) so that it can be stopped whole if the debug build
# fails; in this session still, where the kernel weighs its priority against the tests'.
set -m
nice -n "$background_nice" bash scripts/package-deb.sh --scratch-path .build/package-test --build-only \
    >"$lanes/release-build.log" 2>&1 &
release_build=$!
set +m
trap 'kill -- -"$release_build" 2>/dev/null || true' EXIT

# Integration tests run the `uploader` executable: build it and the tests first
# (--build-tests builds every target, the executable included).
swift build --build-tests

# Each lane is its own `swift test` of the same build: --ignore-lock lets them share .build.
# lane NAME NICE ARGS...: runs in the background, its output in $lanes/NAME.log.
pids=()
names=()
lane() {
    local name="$1" niceness="$2"
    shift 2
    nice -n "$niceness" swift test --skip-build --ignore-lock "$@" >"$lanes/$name.log" 2>&1 &
    pids+=($!)
    names+=("$name")
}
package_test='^IntegrationTests\.DebianPackageTests'
servers='^IntegrationTests\.(S3UploadTests|TusUploadTests|FieldDeploymentTests)'
bulk='^IntegrationTests\.(HostileSizesTests|DropAndArriveTests)/'

lane integration 0 --disable-xctest --filter '^IntegrationTests\.' --skip "$servers"
lane servers 0 --disable-xctest --filter "$servers"
lane core 0 --disable-xctest --filter '^UploaderCoreTests\.'
lane simulator "$background_nice" --disable-xctest --filter '^SimulationTests\.'
lane bulk 0 --disable-swift-testing --filter "$bulk"

# The XCTest lane's output is shown as it comes, so that a CI log moves.
swift test --skip-build --ignore-lock --disable-swift-testing --skip "$package_test" --skip "$bulk" &
xctest=$!

status=0
if ! wait "$release_build"; then
    echo "test.sh: the release build for DebianPackageTests failed; the test builds it again and says why" >&2
fi
trap - EXIT
lane package 0 --disable-swift-testing --filter "$package_test"

wait "$xctest" || status=$?
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=$?
    cat "$lanes/${names[$i]}.log"
done

[ "$status" = 0 ] || echo "test.sh: a test failed (each lane's log is in $lanes/)" >&2
elapsed
exit "$status"
