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

# cached_venv LINK NAME PIN... — a virtual environment holding exactly these
# pip requirements (`pkg==1.2.3` lines, or `-r file`), linked at LINK.
cached_venv() {
  local link=$1 name=$2
  shift 2
  local material key dir
  material=$({ python3 --version; for pin in "$@"; do
    if [ "${pin:0:3}" = "-r " ]; then cat "${pin:3}"; else echo "$pin"; fi
  done; } 2>&1)
  key=$(printf '%s' "$material" | cache_key)
  dir="$CACHE_ROOT/$name-$key"
  if [ ! -f "$dir/.ready" ]; then
    mkdir -p "$CACHE_ROOT"
    (
      # One installer per environment at a time; the others wait for it.
      flock 9
      if [ ! -f "$dir/.ready" ]; then
        echo "installing $name into $dir ..." >&2
        rm -rf "$dir"
        python3 -m venv "$dir"
        local args=()
        for pin in "$@"; do
          if [ "${pin:0:3}" = "-r " ]; then args+=(-r "${pin:3}"); else args+=("$pin"); fi
        done
        "$dir/bin/pip" install --quiet --disable-pip-version-check "${args[@]}" >&2
        printf '%s\n' "$material" >"$dir/.ready"
      fi
    ) 9>"$CACHE_ROOT/.lock-$name-$key"
  fi
  mkdir -p "$(dirname "$link")"
  # A directory left by an older layout is replaced by the link.
  if [ -d "$link" ] && [ ! -L "$link" ]; then rm -rf "$link"; fi
  ln -sfn "$dir" "$link"
}

# cached_node_modules DIR — DIR/node_modules as `npm ci` makes it from
# DIR/package-lock.json, kept in the cache and linked into DIR.
cached_node_modules() {
  local project=$1 key dir
  key=$({ node --version; cat "$project/package-lock.json"; } | cache_key)
  dir="$CACHE_ROOT/node-$(basename "$project")-$key"
  if [ ! -f "$dir/.ready" ]; then
    mkdir -p "$CACHE_ROOT"
    (
      flock 9
      if [ ! -f "$dir/.ready" ]; then
        echo "installing $project's npm packages into $dir ..." >&2
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$project/package.json" "$project/package-lock.json" "$dir/"
        (cd "$dir" && npm ci --silent --no-audit --no-fund)
        touch "$dir/.ready"
      fi
    ) 9>"$CACHE_ROOT/.lock-node-$key"
  fi
  if [ -d "$project/node_modules" ] && [ ! -L "$project/node_modules" ]; then rm -rf "$project/node_modules"; fi
  ln -sfn "$dir/node_modules" "$project/node_modules"
}
