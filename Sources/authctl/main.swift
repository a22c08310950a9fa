import Glibc
import Session

// Before anything else: failed writes become errors rather than signals, descriptors 0–2 stay
// taken, and no core dump or debugger can read a key out of this process.
Output.prepareProcess()
for failure in ProcessHardening.apply() { Output.diagnostic("authctl: warning: \(failure)") }
exit(Program.main(Array(CommandLine.arguments.dropFirst())))
