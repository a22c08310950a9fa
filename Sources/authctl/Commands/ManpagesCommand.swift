import Glibc
import Session

/// `authctl manpages [--output DIR] [COMMAND...]`: the man pages, made from the command
/// declarations (``ManPage``).
enum ManpagesCommand {
    static let output = OptionSpec.value(
        "--output", "DIR", "write the pages into DIR (made, with its parents, when missing) and print their paths, instead of printing one page",
        completion: .directories)

    static let spec = CommandSpec(
        name: "manpages", abstract: "make the man pages (roff) from the command declarations",
        discussion: """
            The pages are authctl.1 (the commands, global options, environment, exit status and \
            files) and one per command, named by its path: authctl-sign.1, authctl-vault-info.1. \
            They come from the declarations --help and the completion scripts are made from, so the \
            three agree. Without --output, the page of COMMAND (authctl.1 without one) is printed; \
            with it, the pages of COMMAND and of every command below it (all of them without one) \
            are written into DIR, each replacing a page of its name, and their paths printed, one a \
            line (with --json, as a JSON array).
            """,
        options: [output],
        arguments: [ArgumentSpec(name: "COMMAND", help: "the command (and subcommand) whose page to make", optional: true,
                                 variadic: true, completesCommands: true)],
        examples: ["authctl manpages sign | man -l -", "authctl manpages --output ~/.local/share/man/man1"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let path = args.positionals
        guard Program.root.command(at: path) != nil else {
            throw CLIError(.usage, "no command '\(EchoedInput.text(path.joined(separator: " ")))' (see 'authctl help')")
        }
        guard let directory = args.value(output) else {
            let page = ManPage.page(for: path, root: Program.root, globals: GlobalOptions.all)
            try Output.data(String(page.text.dropLast()))
            return
        }
        try Output.requireStdout()
        try makeDirectory(directory)
        var written = [String]()
        for page in ManPage.pages(under: path, root: Program.root, globals: GlobalOptions.all) {
            let file = (directory.hasSuffix("/") ? directory : directory + "/") + page.fileName
            try write(page.text, to: file)
            written.append(file)
        }
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(written))
        } else {
            try Output.data(written.joined(separator: "\n"))
        }
    }

    private static func makeDirectory(_ path: String) throws(CLIError) {
        var made = mkdir(path, 0o755) == 0
        if !made && errno == ENOENT {
            // A missing parent: made first, as `mkdir -p` would.
            let parent = String(path.reversed().drop { $0 == "/" }.drop { $0 != "/" }.reversed())
            if !parent.isEmpty && parent != path {
                try makeDirectory(parent)
                made = mkdir(path, 0o755) == 0
            }
        }
        if made || errno == EEXIST {
            var info = stat()
            if stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { return }
            throw CLIError(.ioError, "\(EchoedInput.path(path)) is not a directory")
        }
        throw CLIError(.ioError, "cannot make \(EchoedInput.path(path)): \(String(cString: strerror(errno)))")
    }

    /// Writes `text` to a temporary file beside `path`, then renames it over `path`: a reader never
    /// sees half a page, and a failure leaves the old page (or none). Mode 644 whatever the umask:
    /// a man page is for everyone to read.
    private static func write(_ text: String, to path: String) throws(CLIError) {
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw CLIError(.ioError, "cannot write \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        var done = 0
        var failed = false
        while done < bytes.count && !failed {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 { done += n } else if n == 0 || errno != EINTR { failed = true }
        }
        if !failed { failed = fchmod(fd, 0o644) != 0 }
        let reason = String(cString: strerror(errno))
        if close(fd) != 0 && !failed { failed = true }
        if !failed && rename(temporary, path) == 0 { return }
        let why = failed ? reason : String(cString: strerror(errno))
        unlink(temporary)
        throw CLIError(.ioError, "cannot write \(EchoedInput.path(path)): \(why)")
    }
}
