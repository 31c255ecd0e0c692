#!/usr/bin/env bash
# Builds the seedance image of ./Containerfile as an OCI image layout in OUTDIR, without a container
# daemon: Debian's mmdebstrap makes the Debian 12 root filesystem (from the apt mirror this machine
# is configured with), umoci packs it as an image.
#   scripts/build-image.sh OUTDIR [TAG]      (TAG defaults to the project version, e.g. 0.1.0)
#   scripts/build-image.sh --check-libs      only check that the Containerfile's package list
#                                            provides every shared library the binary needs
# Needs: root (or mmdebstrap's unshare mode), apt-get install mmdebstrap umoci; the release build:
#   cmake --preset release && cmake --build --preset release --target seedance
# Environment: SEEDANCE_BIN (default build/release/apps/cli/seedance), SEEDANCE_APT_SOURCES (a
# sources.list or deb822 file for the image's packages; default: this machine's Debian sources).
# Load it: `skopeo copy oci:OUTDIR:TAG docker-daemon:seedance:TAG`, or push with skopeo to a registry.
# Try it here: `umoci unpack --rootless --image OUTDIR:TAG bundle` and run bundle/rootfs's binary as
# the image's user (deploy/README.md, "The image").
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/build-image.sh OUTDIR [TAG] | --check-libs" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
CHECK_ONLY=0
[ "$1" = "--check-libs" ] && CHECK_ONLY=1
OUT=$1
TAG=${2:-$(sed -n 's/^project(seedance VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)}
[ -n "$TAG" ] || { echo "build-image: no TAG given and no version in CMakeLists.txt" >&2; exit 2; }
BIN=${SEEDANCE_BIN:-build/release/apps/cli/seedance}

for tool in $([ $CHECK_ONLY = 1 ] || echo mmdebstrap umoci); do
  command -v "$tool" >/dev/null || { echo "build-image: $tool not found (apt-get install $tool)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "build-image: $BIN: no seedance binary (cmake --build --preset release --target seedance)" >&2; exit 2; }

# The Containerfile is the one recipe: its package list and uid are used here too.
arg() { sed -n "s/^ARG $1=\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" Containerfile; }
PACKAGES=$(arg RUNTIME_PACKAGES)
UID_=$(arg SEEDANCE_UID)
[ -n "$PACKAGES" ] && [ -n "$UID_" ] || { echo "build-image: Containerfile: ARG RUNTIME_PACKAGES or SEEDANCE_UID missing" >&2; exit 2; }

# Every shared library the binary links directly (its NEEDED entries; the packages' own
# dependencies bring the rest) must come from one of those packages (or libc6).
missing=()
owner() {  # the package that ships library $1 (dpkg knows /lib or /usr/lib, as packaged; merged /usr)
  local real p
  real=$(realpath "$1")
  for p in "$1" "$real" "${real#/usr}" "/usr${1#/usr}"; do
    dpkg -S "$p" 2>/dev/null | sed -n "1s/:.*//p" && return 0
  done
  return 0
}
while read -r lib; do
  pkg=$(owner "$lib")
  [ -n "$pkg" ] || { echo "build-image: $BIN needs $lib, which no Debian package provides here" >&2; exit 1; }
  case " $PACKAGES libc6 " in *" $pkg "*) ;; *) missing+=("$pkg ($lib)") ;; esac
done < <(needed=$(readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
         ldd "$BIN" | awk -v needed=" $(echo $needed) " '$2 == "=>" && index(needed, " " $1 " ") && $3 ~ /^\// {print $3}')
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-image: Containerfile's RUNTIME_PACKAGES lacks: ${missing[*]}" >&2
  exit 1
fi
if [ $CHECK_ONLY = 1 ]; then
  echo "build-image: every shared library of $BIN comes from the Containerfile's RUNTIME_PACKAGES"
  exit 0
fi

SOURCES=${SEEDANCE_APT_SOURCES:-}
if [ -z "$SOURCES" ]; then
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [ -s "$f" ] && { SOURCES=$f; break; }
  done
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs.tar"
# --variant=essential: Essential:yes packages (dpkg, coreutils, bash, ...) plus the listed ones;
# no apt in the image. The hooks do what the Containerfile's RUN and COPY lines do.
DATA_DIR=$(pwd)/data
mmdebstrap --variant=essential --include="${PACKAGES// /,},passwd" \
  --customize-hook="chroot \"\$1\" groupadd --system --gid $UID_ seedance" \
  --customize-hook="chroot \"\$1\" useradd --system --uid $UID_ --gid $UID_ --home-dir /var/lib/seedance --shell /usr/sbin/nologin seedance" \
  --customize-hook="install -d -o $UID_ -g $UID_ \"\$1/var/lib/seedance\"" \
  --customize-hook="install -D -m 0755 $(realpath "$BIN") \"\$1/usr/local/bin/seedance\"" \
  --customize-hook="cp -r $DATA_DIR \"\$1/usr/share/seedance\"" \
  --customize-hook="rm -rf \"\$1\"/usr/share/doc/* \"\$1\"/usr/share/man/* \"\$1\"/usr/share/locale/* \"\$1\"/var/cache/* \"\$1\"/var/lib/apt/lists/* \"\$1\"/var/log/*" \
  bookworm "$ROOTFS" ${SOURCES:+"$SOURCES"}

rm -rf "$OUT"
umoci init --layout "$OUT"
umoci new --image "$OUT:$TAG"
umoci unpack --image "$OUT:$TAG" "$WORK/bundle"
tar -C "$WORK/bundle/rootfs" -xpf "$ROOTFS" --numeric-owner
umoci repack --image "$OUT:$TAG" "$WORK/bundle"
umoci config --image "$OUT:$TAG" \
  --config.user "$UID_:$UID_" \
  --config.env SEEDANCE_DATA_DIR=/usr/share/seedance \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.workingdir /var/lib/seedance \
  --config.exposedports 8443/tcp \
  --config.entrypoint /usr/local/bin/seedance \
  --config.cmd --help \
  --architecture "$(dpkg --print-architecture)" --os linux \
  --author "seedance scripts/build-image.sh" \
  --config.label org.opencontainers.image.title=seedance \
  --config.label "org.opencontainers.image.version=$TAG"
umoci gc --layout "$OUT"
size=$(du -sb "$OUT" | cut -f1)
echo "build-image: $OUT:$TAG ($((size / 1024 / 1024)) MiB compressed, OCI layout)"

# Smoke check (with bubblewrap installed): the image unpacked without root privileges, its root
# filesystem mounted read-only, `seedance --version` run as the image's user.
if command -v bwrap >/dev/null; then
  umoci unpack --rootless --image "$OUT:$TAG" "$WORK/check" >/dev/null 2>&1
  version=$(bwrap --unshare-user --uid "$UID_" --gid "$UID_" --ro-bind "$WORK/check/rootfs" / \
              --proc /proc --dev /dev --tmpfs /tmp --setenv SEEDANCE_DATA_DIR /usr/share/seedance \
              /usr/local/bin/seedance --version)
  echo "build-image: as uid $UID_ on a read-only root: seedance --version: $version"
else
  echo "build-image: bwrap not found (apt-get install bubblewrap): smoke check skipped" >&2
fi
