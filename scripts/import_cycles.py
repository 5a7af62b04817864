#!/usr/bin/env python3
"""File-level import cycles of one Rust crate.

Usage: scripts/import_cycles.py CRATE_DIR [--verbose]

A file-level cycle: file A uses an item defined in file B and file B uses an item defined in
file A. For every .rs file under CRATE_DIR/src the script reads (after dropping comments,
string literals and `#[cfg(test)]` modules):
- `use crate::…`, `use super::…`, `use self::…` declarations (nested braces expanded);
- `crate::a::b` / `super::a` paths written in code;
- paths through a module brought in by `use crate::x;` (`x::f()` later in the file).
Each path is mapped to the file of the deepest module it names (`a/b.rs` or `a/b/mod.rs`),
and, when that file only re-exports the named item (`pub use inner::Item;`), on to the file
the re-export points at. Prints every cycle (pairs of files, plus longer cycles among the
strongly connected files) and exits 1 if there is any, 0 otherwise.
"""
import os
import re
import sys


def strip(src):
    """Source without comments, string/char literals and #[cfg(test)] items."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', src[i:]).group(1)
            end = src.find('"' + hashes, i + 2 + len(hashes))
            out.append('""')
            i = n if end < 0 else end + 1 + len(hashes)
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            out.append('""')
            i += 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", src[i:i + 4]) or (c == "'" and src.startswith("'\\u{", i)):
            j = src.find("'", i + 2)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    # Drop #[cfg(test)] modules / items (brace-matched).
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            break
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        text = text[:m.start()] + text[j:]
    return text


def expand_use(tree):
    """`a::{b, c::{d, e as f}}` → ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^([^{]*)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p:
            out.extend(expand_use(prefix + p))
    return out


class Crate:
    def __init__(self, root):
        self.src = os.path.join(root, "src")
        self.files = {}  # module path tuple -> file
        for dirpath, _, names in os.walk(self.src):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.src)[:-3].split(os.sep)
                if rel[-1] in ("mod", "lib", "main"):
                    rel = rel[:-1]
                if rel and rel[0] == "bin":
                    continue
                self.files[tuple(rel)] = full
        self.text = {f: strip(open(f, encoding="utf-8").read()) for f in self.files.values()}
        self.modpath = {f: m for m, f in self.files.items()}
        self.reexports = {f: self.parse_reexports(f) for f in self.files.values()}

    def parse_uses(self, f):
        """(is_pub, expanded path) of every use declaration in file f."""
        out = []
        for m in re.finditer(r"(?:^|[;{}\s])(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", self.text[f]):
            tree = re.sub(r"\s+as\s+", "@", m.group(2))
            for p in expand_use(tree):
                out.append((bool(m.group(1)), p))
        return out

    def parse_reexports(self, f):
        """Item name → absolute path of a `pub use` in f (for following re-exports)."""
        res = {}
        for is_pub, p in self.parse_uses(f):
            if not is_pub:
                continue
            absolute = self.absolute(f, p)
            if absolute is None:
                continue
            if absolute[-1] == "*":
                res.setdefault("*", []).append(absolute[:-1])
            else:
                res[absolute[-1]] = absolute
        return res

    def absolute(self, f, path):
        """A `use`/code path seen in file f as a tuple from the crate root, or None (external)."""
        segs = [s for s in path.split("@")[0].replace(" ", "").split("::") if s]
        if not segs:
            return None
        here = list(self.modpath[f])
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] == "self":
            return tuple(here + segs[1:])
        if segs[0] == "super":
            base = here
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
            return tuple(base + segs)
        # A path relative to the current module: a child module of f.
        if tuple(here + [segs[0]]) in self.files:
            return tuple(here + segs)
        return None

    def target(self, absolute, depth=0):
        """The file defining what `absolute` names."""
        for k in range(len(absolute), -1, -1):
            if absolute[:k] in self.files:
                f = self.files[absolute[:k]]
                rest = absolute[k:]
                if rest and depth < 8:
                    rx = self.reexports.get(f, {})
                    if rest[0] in rx:
                        return self.target(rx[rest[0]] + rest[1:], depth + 1)
                    for star in rx.get("*", []):
                        t = self.target(star + rest, depth + 1)
                        if t != self.files.get(star):
                            return t
                return f
        return None

    def edges(self, f):
        deps = set()
        text = self.text[f]
        aliases = {}
        for _, p in self.parse_uses(f):
            p, _, alias = p.partition("@")
            a = self.absolute(f, p)
            if a is None:
                continue
            if a and a[-1] == "*":
                a = a[:-1]
            if a and a[-1] == "self":
                a = a[:-1]
            t = self.target(a)
            if t:
                deps.add(t)
            if a in self.files:  # a module brought into scope
                aliases[alias or (a[-1] if a else "crate")] = a
        # Paths in code (use declarations are read above).
        code = re.sub(r"(?:^|(?<=[;{}\s]))(?:pub(?:\([^)]*\))?\s+)?use\s+[^;]+;", " ", text)
        for m in re.finditer(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)", code):
            a = self.absolute(f, m.group(1))
            if a is not None:
                t = self.target(a)
                if t:
                    deps.add(t)
        for name, a in aliases.items():
            for m in re.finditer(r"(?<![\w:])" + re.escape(name) + r"((?:::\w+)+)", code):
                t = self.target(a + tuple(s for s in m.group(1).split("::") if s))
                if t:
                    deps.add(t)
        deps.discard(f)
        return deps


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "--verbose" in sys.argv
    if len(args) != 1:
        print(__doc__)
        return 2
    root = args[0]
    crate = Crate(root)
    rel = lambda f: os.path.relpath(f, root)
    graph = {f: crate.edges(f) for f in crate.files.values()}
    if verbose:
        for f in sorted(graph):
            print(rel(f), "->", ", ".join(sorted(rel(d) for d in graph[f])))
    pairs = sorted(
        (a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, ())
    )
    for a, b in pairs:
        print(f"cycle: {rel(a)} <-> {rel(b)}")
    # Longer cycles: strongly connected groups left once the two-file cycles' edges are gone.
    in_pair = set(pairs) | {(b, a) for a, b in pairs}
    rest = {a: {b for b in graph[a] if (a, b) not in in_pair} for a in graph}
    longer = sccs(rest)
    for comp in longer:
        print("cycle among: " + ", ".join(rel(f) for f in comp))
    if not pairs and not longer:
        print(f"{root}: no file-level import cycles ({len(graph)} files)")
        return 0
    print(f"{root}: {len(pairs)} two-file cycle(s), {len(longer)} longer cycle group(s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
