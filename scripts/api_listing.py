#!/usr/bin/env python3
"""Writes a module's public API as sorted text, one declaration a line, from the symbol graph
files swift-symbolgraph-extract wrote (MODULE.symbols.json and MODULE@OTHER.symbols.json).

    api_listing.py MODULE SYMBOLGRAPH_DIR

A line is the symbol's path (arguments labelled), two spaces, and its declaration as Swift
writes it, whitespace collapsed:

    Device.sign(optionsJSON:origin:user:fault:attachment:caller:)  func sign(...) throws(DeviceError) -> AuthenticationResponse

then one line per conformance (`Device.Code: conforms to Swift.Equatable`). Members of
extensions of another module's types (MODULE@OTHER files) are listed under that type's path with
its module first (`Swift.String.trimmed()`). Used by scripts/check-api.sh.
"""
import glob
import json
import os
import sys

# Implied by Sendable (and by every type since Swift 6.2): noise in a listing.
IGNORED_CONFORMANCES = {"Swift.SendableMetatype"}


def declaration(symbol):
    text = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
    return " ".join(text.split())


def listing(module, directory):
    files = [os.path.join(directory, f"{module}.symbols.json")]
    files += sorted(glob.glob(os.path.join(directory, f"{module}@*.symbols.json")))
    lines = set()
    for path in files:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            graph = json.load(f)
        extended = os.path.basename(path)[len(module) + 1:-len(".symbols.json")] if "@" in os.path.basename(path) else None
        paths = {}
        for symbol in graph["symbols"]:
            components = symbol["pathComponents"]
            name = ".".join(([extended] if extended else []) + components)
            paths[symbol["identifier"]["precise"]] = name
            if symbol["kind"]["identifier"] == "swift.extension":
                continue  # its members and conformances are listed under the extended type
            lines.add(f"{name}  {declaration(symbol)}")
        for relation in graph["relationships"]:
            if relation["kind"] != "conformsTo":
                continue
            target = relation.get("targetFallback") or paths.get(relation["target"], relation["target"])
            if target in IGNORED_CONFORMANCES:
                continue
            source = paths.get(relation["source"], relation["source"])
            conditions = relation.get("swiftConstraints")
            where = ""
            if conditions:
                where = " where " + ", ".join(f"{c['lhs']} {'==' if c['kind'] == 'sameType' else ':'} {c['rhs']}" for c in conditions)
            lines.add(f"{source}: conforms to {target}{where}")
    return sorted(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: api_listing.py MODULE SYMBOLGRAPH_DIR")
    for line in listing(sys.argv[1], sys.argv[2]):
        print(line)


if __name__ == "__main__":
    main()
