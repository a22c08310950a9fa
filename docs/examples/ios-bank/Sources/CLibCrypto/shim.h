// OpenSSL's one-shot SHA-256, which stands in for CryptoKit's on Linux (SeedShapes' Data.sha256()).
#include <openssl/sha.h>
