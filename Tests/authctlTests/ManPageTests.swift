import Testing
@testable import authctl

/// The requests the man page writer uses; any other line starting with `.` or `'` would be text
/// that roff took for a request.
private let requests = [".\\\"", ".TH ", ".SH ", ".TP", ".PP", ".IP", ".RS ", ".RE", ".nf", ".fi", ".nh", ".ad "]

@Test func roffTextEscapesWhatRoffWouldReadAsMarkup() {
    #expect(Roff.text(#"a\b"#) == #"a\eb"#)
    #expect(Roff.text("--kdf") == #"\-\-kdf"#)
    #expect(Roff.text("it's `x`") == #"it\(aqs \(gax\(ga"#)
    #expect(Roff.text(".so /etc/passwd") == #"\&.so /etc/passwd"#)
    #expect(Roff.text("x\n.TH A") == "x\n\\&.TH A")
    #expect(Roff.text("a.b") == "a.b")
    #expect(Roff.text("'br") == #"\(aqbr"#)
    #expect(Roff.text("a — b…ü") == #"a \[u2014] b\[u2026]\[u00FC]"#)
    #expect(Roff.text("😀") == #"\[u1F600]"#)
    #expect(Roff.text("bell\u{07}\u{1B}[31m") == "bell[31m")
    #expect(Roff.argument(#"say "hi""#) == #""say \(dqhi\(dq""#)
}

@Test func hostileDeclarationsCannotInjectRequests() {
    let hostile = CommandSpec(
        name: "evil", abstract: ".so /etc/passwd", discussion: "first\n.sp 100\n'br\nback\\slash \\fBbold",
        options: [.value("--x", "V", ".ig end", choices: ["a", "b"])],
        arguments: [ArgumentSpec(name: "'A", help: ".de X")],
        examples: [".TH EVIL", "echo '\\n'"], run: { _ in })
    let root = CommandSpec(name: "authctl", abstract: "root", subcommands: [hostile])
    let page = ManPage.page(for: ["evil"], root: root, globals: [])
    for line in page.text.split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
        #expect(requests.contains { line.hasPrefix($0) }, "a request from a declaration: \(line)")
    }
    #expect(!page.text.contains("\\fBbold"), "an escape from a declaration reached the page")
    #expect(page.text.contains(#"back\eslash \efBbold"#))
}

@Test func everyCommandHasOnePageNamedByItsPath() {
    let pages = ManPage.pages(under: [], root: Program.root, globals: GlobalOptions.all)
    let names = pages.map(\.fileName)
    #expect(Set(names).count == names.count)
    #expect(names.count == Program.root.walk().count)
    for expected in ["authctl.1", "authctl-sign.1", "authctl-vault.1", "authctl-vault-info.1", "authctl-device-add.1", "authctl-manpages.1"] {
        #expect(names.contains(expected))
    }
    #expect(ManPage.pages(under: ["vault"], root: Program.root, globals: GlobalOptions.all).map(\.fileName)
        == ["authctl-vault.1", "authctl-vault-info.1", "authctl-vault-check.1", "authctl-vault-compact.1", "authctl-vault-passwd.1"])
    #expect(ManPage.pages(under: ["nothing"], root: Program.root, globals: GlobalOptions.all).isEmpty)
}

@Test func pagesAreMadeFromTheSourceAlone() {
    let once = ManPage.pages(under: [], root: Program.root, globals: GlobalOptions.all)
    let twice = ManPage.pages(under: [], root: Program.root, globals: GlobalOptions.all)
    #expect(once.map(\.text) == twice.map(\.text))
    for page in once {
        let header = page.text.split(separator: "\n").first { $0.hasPrefix(".TH ") } ?? ""
        #expect(header.contains("\"authctl \(VersionCommand.version)\""))
        #expect(header.contains(Roff.argument(VersionCommand.date)))
        #expect(page.text.unicodeScalars.allSatisfy { $0.isASCII }, "\(page.fileName) holds a byte roff would read as Latin-1")
        for line in page.text.split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
            #expect(requests.contains { line.hasPrefix($0) }, "\(page.fileName): \(line)")
        }
    }
}

@Test func theProgramPageHasTheErrorTableAndEveryVariable() {
    let text = ManPage.page(for: [], root: Program.root, globals: GlobalOptions.all).text
    for name in CLIError.Name.allCases {
        #expect(text.contains(".TP\n\\fB\(name.exitCode)\\fR\n\\fB\(Roff.text(name.rawValue))\\fR: "), "\(name)")
    }
    for variable in EnvironmentVariable.all {
        #expect(text.contains(".TP\n" + Roff.bold(variable.name) + "\n"), "\(variable.name)")
    }
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "ENVIRONMENT", "EXIT STATUS", "FILES", "EXAMPLES", "SEE ALSO"] {
        #expect(text.contains("\n.SH \(section)\n"), "\(section)")
    }
}
