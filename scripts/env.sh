# shellcheck shell=bash
# Sourced by the other scripts: puts a Swift toolchain on PATH if `swift` is not
# already there. Honours $SWIFT_HOME (the toolchain root, holding usr/bin/swift).

ensure_swift_on_path() {
    if command -v swift >/dev/null 2>&1; then
        return 0
    fi
    local candidate
    for candidate in \
        "${SWIFT_HOME:+$SWIFT_HOME/usr/bin}" \
        "${SWIFT_HOME:+$SWIFT_HOME/bin}" \
        /opt/swift/usr/bin \
        /usr/share/swift/usr/bin \
        "$HOME/.local/share/swiftly/bin" \
        "$HOME/.swiftly/bin"; do
        if [ -n "$candidate" ] && [ -x "$candidate/swift" ]; then
            export PATH="$candidate:$PATH"
            return 0
        fi
    done
    echo "error: no Swift toolchain found: put swift on PATH or set SWIFT_HOME" >&2
    return 1
}

# The repository's top directory (the one holding Package.swift).
repo_root() {
    cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
}
