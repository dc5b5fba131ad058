#!/usr/bin/env bash
# The data step the shell recipes share: build the release of SUITE into OUT/release (`gengap release`), then
# export it into OUT/EXPORT_DIR (`gengap export --to FORMAT`), each step skipped when its folder is there.
#
#   bash examples/export.sh OUT FORMAT EXPORT_DIR [EXPORT_ARG ...]     (e.g. --config parity_check-length --shots 2)
#
# Install: gengap with the release extra (the release's plots need matplotlib), and the harness extra to export for
# verl (Parquet): `pip install -e '.[release,harness]'` in a gengap checkout, its environment active or GENGAP set.
#
# Variables: GENGAP (gengap's command, default gengap), SUITE (default: suite.yaml beside this script).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT FORMAT EXPORT_DIR [EXPORT_ARG ...]" >&2; exit 2; }
OUT="$1" FORMAT="$2" EXPORT_DIR="$3"
shift 3
GENGAP="${GENGAP:-gengap}"
command -v "$GENGAP" >/dev/null 2>&1 || { echo "$0: no command $GENGAP: install gengap with its release extra (pip install -e '.[release,harness]' in a gengap checkout) and activate its environment, or set GENGAP to its gengap" >&2; exit 2; }
SUITE="${SUITE:-$(cd "$(dirname "$0")" && pwd)/suite.yaml}"
mkdir -p "$OUT"
[ -d "$OUT/release" ] || "$GENGAP" release "$SUITE" --out "$OUT/release"
[ -d "$OUT/$EXPORT_DIR" ] || "$GENGAP" export "$OUT/release" --to "$FORMAT" --out "$OUT/$EXPORT_DIR" "$@"
