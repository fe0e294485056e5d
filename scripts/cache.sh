# Per-user tool cache, outside the clone (sourced by the scripts). Python
# virtual environments and npm installs are built once per set of pins and
# shared by every clone of this repository on the machine:
#
#   ${KOBANA_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/kobana-inbox}/<name>-<key>
#
# where <key> is a hash of what was pinned (and of the Python or Node
# version), so a changed pin makes a new environment and never changes one in
# use. The clone keeps only a symlink (.local/…) to it. An empty cache is
# filled from the registries by the same code; deleting the folder is always
# safe.

CACHE_ROOT="${KOBANA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kobana-inbox}"

# The key of a set of pins: the first 16 hex digits of their SHA-256.
cache_key() {
  sha256sum | cut -c1-16
}

# filled DIR LABEL INSTALL... — makes DIR once: INSTALL (a command, run with
# DIR as its last argument) fills it, and DIR/.ready marks it complete. One
# installer per DIR at a time; the others wait for it and then use its work.
filled() {
  local dir=$1 label=$2
  shift 2
  [ -f "$dir/.ready" ] && return 0
  mkdir -p "$CACHE_ROOT"
  (
    flock 9
    if [ ! -f "$dir/.ready" ]; then
      echo "installing $label into $dir ..." >&2
      rm -rf "$dir"
      mkdir -p "$dir"
      "$@" "$dir"
      touch "$dir/.ready"
    fi
  ) 9>"$dir.lock"
}

# linked TARGET LINK — LINK points at TARGET (a directory left at LINK by an
# older layout is replaced).
linked() {
  mkdir -p "$(dirname "$2")"
  if [ -d "$2" ] && [ ! -L "$2" ]; then rm -rf "$2"; fi
  ln -sfn "$1" "$2"
}

# pip_args PIN... — the pins as pip arguments (`-r file` becomes two).
pip_args() {
  for pin in "$@"; do
    if [ "${pin:0:3}" = "-r " ]; then printf '%s\n' -r "${pin:3}"; else printf '%s\n' "$pin"; fi
  done
}

install_venv() {
  local dir=${*: -1} args=()
  mapfile -t args < <(pip_args "${@:1:$#-1}")
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "${args[@]}" >&2
}

# cached_venv LINK NAME PIN... — a virtual environment holding exactly these
# pip requirements (`pkg==1.2.3` lines, or `-r file`), linked at LINK.
cached_venv() {
  local link=$1 name=$2
  shift 2
  local key
  key=$({ python3 --version; for pin in "$@"; do
    if [ "${pin:0:3}" = "-r " ]; then cat "${pin:3}"; else echo "$pin"; fi
  done; } 2>&1 | cache_key)
  filled "$CACHE_ROOT/$name-$key" "$name" install_venv "$@"
  linked "$CACHE_ROOT/$name-$key" "$link"
}

install_node_modules() {
  local project=$1 dir=$2
  cp "$project/package.json" "$project/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --silent --no-audit --no-fund)
}

# cached_node_modules DIR — DIR/node_modules as `npm ci` makes it from
# DIR/package-lock.json, kept in the cache and linked into DIR.
cached_node_modules() {
  local project=$1 key dir
  key=$({ node --version; cat "$project/package-lock.json"; } | cache_key)
  dir="$CACHE_ROOT/node-$(basename "$project")-$key"
  filled "$dir" "$project's npm packages" install_node_modules "$project"
  linked "$dir/node_modules" "$project/node_modules"
}
