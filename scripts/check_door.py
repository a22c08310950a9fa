#!/usr/bin/env python3
"""Holds the front ends to the one door (docs/design.md, "The module map"): the command line
(Sources/authctl), `authctl serve` (Sources/Server) and the scenario runner (Sources/Scenarios)
parse, call `Session`, and print. So a front end's file imports `Session` and the modules that
are that front end's own (its C library, its HTTP client, the front ends it starts), never one of
the domain below the door (Keychain, KeyVault, SyncStore, VirtualAuthenticator, …); and it never
names `Account`, which only the request layer holds.

    check_door.py [ROOT]     # exits 1 listing each file and line that reaches past the door

Run by scripts/check-api.sh. The words a front end may need of the lower layers (`SecureBytes`
for a secret read from a terminal, `KDFLevel`, `Vault.Access`, `Credential`, …) come with
`import Session`, which re-exports its vocabulary.
"""
import pathlib
import re
import sys

# What each front end may import besides the system's modules: Session, and its own.
ALLOWED = {
    "Sources/authctl": {"Session", "Scenarios", "Audit", "Server", "CTAP", "Benchmarks", "CBuildInfo"},
    "Sources/CTAP": {"Session", "POSIXSockets"},
    "Sources/Server": {"Session", "Audit", "CMicroHTTPD", "POSIXSockets", "Curl"},
    "Sources/Scenarios": {"Session", "Curl"},
    "Sources/Audit": {"Session", "Curl"},
    "Sources/AuthenticationServices": {"Session", "Curl"},
}
SYSTEM = {"Glibc", "Darwin", "Foundation", "FoundationEssentials", "Dispatch", "Synchronization"}
IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?(\w+)")
# `Account` as a name of its own (not `AccountSpec`, `HostedAccount`, `AccountChoice`).
ACCOUNT = re.compile(r"(?<![\w.])Account(?!\w)|\bSession\s*\.\s*account\b|\bsession\??\s*\.\s*account\b")


def code_of(line):
    """The line without its comment and string literals (which may say "Account" freely)."""
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]


def problems(root):
    found = []
    for front, allowed in ALLOWED.items():
        for path in sorted((root / front).rglob("*.swift")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = code_of(line)
                where = f"{path.relative_to(root)}:{number}"
                imported = IMPORT.match(code)
                if imported and imported.group(1) not in allowed | SYSTEM:
                    found.append(f"{where}: imports {imported.group(1)}: a front end imports Session "
                                 f"(and {', '.join(sorted(allowed - {'Session'})) or 'nothing else'})")
                elif ACCOUNT.search(code):
                    found.append(f"{where}: names the Account: a front end reaches it only through Session's requests")
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    found = problems(root)
    for problem in found:
        print(f"check-door: {problem}", file=sys.stderr)
    if found:
        print("check-door: a front end reaches past Session (docs/design.md, \"The module map\"): make it a Session request",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
