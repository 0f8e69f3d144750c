#!/bin/sh
# Fails when docs/cli.md is not what `glassbox help --markdown` prints, so
# the page cannot drift from the binary's help (cli/help.c).
#   tests/check-cli-doc.sh GLASSBOX_BIN DOCS_CLI_MD
# `make cli-doc` rewrites the page.
set -eu
bin="$1"
doc="$2"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin" help --markdown >"$out"
if ! diff -u "$doc" "$out"; then
	echo "check-cli-doc: $doc differs from \`glassbox help --markdown\` (above): run make cli-doc" >&2
	exit 1
fi
echo "check-cli-doc: $doc is the binary's help"
