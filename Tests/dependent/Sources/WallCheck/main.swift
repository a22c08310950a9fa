// Must not compile: ProcessHardening is the command line's (package access in Keychain), not part
// of the Keychain product's API. The interop test builds this target and expects exactly this
// refusal (Tests/interop/test_library.py).
import Keychain

_ = ProcessHardening.apply()
