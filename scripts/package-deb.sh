#!/usr/bin/env bash
# Builds dist/uploader_VERSION_ARCH.deb from this source tree, without network: a
# release build with the Swift runtime linked in (--static-swift-stdlib), so the
# package runs on machines without a Swift toolchain; Depends: computed by
# dpkg-shlibdeps; man pages generated from docs/; then lintian, which must report no
# error. Prints the path of the package. Needs the Swift toolchain and Debian's packaging
# tools (dpkg-dev, lintian, python3 for the man pages, binutils) only.
#
# Options:
#   --scratch-path DIR   SwiftPM's build directory (default .build); give a separate one
#                        when another swift command may hold .build (the tests do)
#   --out DIR            where the .deb goes (default dist)
#   --build-only         stop after the release build and print the executable's path (scripts/test.sh
#                        starts it early for the tests; bench/run.sh measures that executable)
# Environment: DEB_MAINTAINER ("Name <address>") for the Maintainer field and changelog.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"
root="$(repo_root)"

# Relative paths are the caller's, so they are resolved before the cd.
scratch="$root/.build"
out="$root/dist"
build_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --scratch-path) [ $# -ge 2 ] || { echo "package-deb: --scratch-path needs a directory" >&2; exit 2; }
                        scratch="$(realpath -m "$2")"; shift 2 ;;
        --out) [ $# -ge 2 ] || { echo "package-deb: --out needs a directory" >&2; exit 2; }
               out="$(realpath -m "$2")"; shift 2 ;;
        --build-only) build_only=1; shift ;;
        *) echo "package-deb: unknown argument: $1" >&2; exit 2 ;;
    esac
done
cd "$root"

step() { printf '==> %s\n' "$*" >&2; }
die() { printf 'package-deb: error: %s\n' "$*" >&2; exit 1; }

# The Swift toolchain and Debian's packaging tools, nothing else: no test environment, no network.
ensure_swift_on_path
for tool in dpkg-deb dpkg-shlibdeps lintian python3 strip gzip; do
    command -v "$tool" >/dev/null 2>&1 \
        || die "$tool not found: apt-get install dpkg-dev lintian python3 binutils gzip (or run scripts/install-deps.sh)"
done

# One source of truth for the version: what `uploader --version` prints.
version="$(sed -n 's/.*static let string = "\([^"]*\)".*/\1/p' Sources/UploaderSupport/UploaderVersion.swift)"
[ -n "$version" ] || die "no version found in Sources/UploaderSupport/UploaderVersion.swift"
arch="$(dpkg --print-architecture)"
maintainer="${DEB_MAINTAINER:-uploader developers <uploader@example.invalid>}"
# Dates in the package (changelog, man pages, file times) are the last commit's, so two
# builds of one commit give the same files.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

step "building uploader $version (release, Swift runtime linked statically)"
# --disable-local-rpath: no RUNPATH=$ORIGIN in a binary that lives in /usr/bin.
# -z now: full RELRO (every symbol bound at start), as Debian builds its binaries.
build=(swift build -c release --product uploader --static-swift-stdlib --disable-local-rpath
       --scratch-path "$scratch" -Xlinker -z -Xlinker now)
"${build[@]}" >&2
binary="$("${build[@]}" --show-bin-path)/uploader"
[ -x "$binary" ] || die "no executable at $binary"
if [ "$build_only" = 1 ]; then printf '%s\n' "$binary"; exit 0; fi

work="$scratch/deb"
stage="$work/root"
rm -rf "$work"
mkdir -p "$stage/DEBIAN"

step "staging the package tree"
install -D -m 0755 "$binary" "$stage/usr/bin/uploader"
strip --remove-section=.comment --remove-section=.note "$stage/usr/bin/uploader"
install -D -m 0644 packaging/deb/uploader.conf "$stage/etc/uploader/uploader.conf"
install -D -m 0644 examples/systemd/uploader.service "$stage/lib/systemd/system/uploader.service"
doc="$stage/usr/share/doc/uploader"
install -D -m 0644 packaging/deb/copyright "$doc/copyright"
for example in examples/systemd/uploader.service.d/*.conf; do
    install -D -m 0644 "$example" "$doc/examples/uploader.service.d/$(basename "$example")"
done
{
    printf 'uploader (%s) unstable; urgency=medium\n\n' "$version"
    printf '  * Built from the uploader source tree; its history is the git log.\n\n'
    printf ' -- %s  %s\n' "$maintainer" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$work/changelog.gz"
install -m 0644 "$work/changelog.gz" "$doc/changelog.gz"

python3 packaging/man/mkman.py --version "$version" --date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)" \
    --out "$work/man"
install -D -m 0644 "$work/man/uploader.1" "$stage/usr/share/man/man1/uploader.1"
install -D -m 0644 "$work/man/uploader.conf.5" "$stage/usr/share/man/man5/uploader.conf.5"
gzip -9n "$stage/usr/share/man/man1/uploader.1" "$stage/usr/share/man/man5/uploader.conf.5"

step "computing Depends: from the libraries the binary needs"
# dpkg-shlibdeps wants a debian/control; the package's own one is not a source package.
mkdir -p "$work/shlibs/debian"
printf 'Source: uploader\n\nPackage: uploader\nArchitecture: any\n' >"$work/shlibs/debian/control"
shlibs="$(cd "$work/shlibs" && dpkg-shlibdeps -O "$stage/usr/bin/uploader")"
depends="${shlibs#shlibs:Depends=}"
if [ -z "$depends" ] || [ "$depends" = "$shlibs" ]; then die "dpkg-shlibdeps gave no Depends: ($shlibs)"; fi
depends="adduser, $depends"

installed_size="$(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" \
    packaging/deb/control.in >"$stage/DEBIAN/control"
echo /etc/uploader/uploader.conf >"$stage/DEBIAN/conffiles"
install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$stage/DEBIAN/"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z \
    | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
find "$stage" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0 touch -h -d "@$SOURCE_DATE_EPOCH"

mkdir -p "$out"
deb="$out/uploader_${version}_${arch}.deb"
step "writing ${deb#"$root"/}"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2

step "lintian"
lintian --fail-on error --info "$deb" >&2 || die "lintian reported errors (above)"

echo "$deb"
