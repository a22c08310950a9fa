import Glibc

exit(Program.main(Array(CommandLine.arguments.dropFirst())))
