#ifndef AUTHCTL_COPENSSL_SHIM_H
#define AUTHCTL_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/kdf.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

/* Function-like macros and compound constants Swift cannot import. */
static const char *const authctl_param_pub_key = OSSL_PKEY_PARAM_PUB_KEY;
static const char *const authctl_param_priv_key = OSSL_PKEY_PARAM_PRIV_KEY;
static const int authctl_pkey_ec = EVP_PKEY_EC;
static const int authctl_nid_p256 = NID_X9_62_prime256v1;
static const int authctl_pkey_ed25519 = EVP_PKEY_ED25519;
static const int authctl_pkey_rsa = EVP_PKEY_RSA;
static const char *const authctl_param_rsa_n = OSSL_PKEY_PARAM_RSA_N;
static const char *const authctl_param_rsa_e = OSSL_PKEY_PARAM_RSA_E;
static const char *const authctl_param_ec_x = OSSL_PKEY_PARAM_EC_PUB_X;
static const char *const authctl_param_ec_y = OSSL_PKEY_PARAM_EC_PUB_Y;
static const char *const authctl_param_group_name = OSSL_PKEY_PARAM_GROUP_NAME;
static const int authctl_mbstring_utf8 = MBSTRING_UTF8;

/* BIO_get_mem_data is a macro over BIO_ctrl. */
static inline long authctl_bio_get_mem_data(BIO *bio, const unsigned char **data) {
    char *p = NULL;
    long n = BIO_get_mem_data(bio, &p);
    *data = (const unsigned char *)p;
    return n;
}

/* HKDF-SHA-256 (RFC 5869) through EVP_KDF "HKDF"; the OSSL_PARAM array lives on this frame, so
   no pointer outlives the call. Returns 1 on success. */
static inline int authctl_hkdf_sha256(const unsigned char *ikm, size_t ikm_len,
                                      const unsigned char *salt, size_t salt_len,
                                      const unsigned char *info, size_t info_len,
                                      unsigned char *out, size_t out_len) {
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (kdf == NULL) return 0;
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[5], *p = params;
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len);
    *p = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(ctx, out, out_len, params) == 1;
    EVP_KDF_CTX_free(ctx);
    return ok;
}

/* A P-256 key pair from its private scalar (32 bytes, big-endian) and its uncompressed public
   point (65 bytes), through EVP_PKEY_fromdata: no decoder is looked up, which is what makes
   d2i_AutoPrivateKey cost hundreds of microseconds. The scalar's native-order copy is wiped.
   NULL on failure. */
static inline EVP_PKEY *authctl_p256_from_scalar(const unsigned char *scalar, const unsigned char *point) {
    unsigned char native[32];
    for (int i = 0; i < 32; i++) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        native[i] = scalar[31 - i];  /* OSSL_PARAM integers are in native byte order */
#else
        native[i] = scalar[i];
#endif
    }
    OSSL_PARAM params[4];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0);
    params[1] = OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, native, sizeof native);
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, 65);
    params[3] = OSSL_PARAM_construct_end();
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx != NULL && EVP_PKEY_fromdata_init(ctx) == 1) {
        if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_KEYPAIR, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    OPENSSL_cleanse(native, sizeof native);
    return key;
}

/* AES-256-GCM with a 12-byte nonce and a 16-byte tag written after the ciphertext
   (out holds in_len + 16 bytes). Returns 1 on success. */
static inline int authctl_aes256gcm_seal(const unsigned char *key, const unsigned char *nonce,
                                         const unsigned char *aad, size_t aad_len,
                                         const unsigned char *in, size_t in_len, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int len = 0, ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
        && EVP_EncryptInit_ex(ctx, NULL, NULL, key, nonce) == 1
        && (aad_len == 0 || EVP_EncryptUpdate(ctx, NULL, &len, aad, (int)aad_len) == 1)
        && (in_len == 0 || EVP_EncryptUpdate(ctx, out, &len, in, (int)in_len) == 1)
        && EVP_EncryptFinal_ex(ctx, out + in_len, &len) == 1
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + in_len) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* The inverse: in is ciphertext ‖ tag (in_len >= 16), out holds in_len - 16 bytes. Returns 1
   only when the tag verifies. */
static inline int authctl_aes256gcm_open(const unsigned char *key, const unsigned char *nonce,
                                         const unsigned char *aad, size_t aad_len,
                                         const unsigned char *in, size_t in_len, unsigned char *out) {
    if (in_len < 16) return 0;
    size_t n = in_len - 16;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int len = 0, ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
        && EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) == 1
        && (aad_len == 0 || EVP_DecryptUpdate(ctx, NULL, &len, aad, (int)aad_len) == 1)
        && (n == 0 || EVP_DecryptUpdate(ctx, out, &len, in, (int)n) == 1)
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)(in + n)) == 1
        && EVP_DecryptFinal_ex(ctx, out + n, &len) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* A P-256 public key from its uncompressed point (0x04 ‖ x ‖ y, 65 bytes), through
   EVP_PKEY_fromdata, which refuses a point not on the curve. NULL on failure. */
static inline EVP_PKEY *authctl_p256_public_from_point(const unsigned char *point) {
    OSSL_PARAM params[3];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, 65);
    params[2] = OSSL_PARAM_construct_end();
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx != NULL && EVP_PKEY_fromdata_init(ctx) == 1) {
        if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/* ECDH (SP 800-56A, the plain shared x-coordinate) of own's private key and peer's public key,
   the peer checked first (EVP_PKEY_derive_set_peer validates it). out holds 32 bytes. Returns 1
   on success. */
static inline int authctl_p256_ecdh(EVP_PKEY *own, EVP_PKEY *peer, unsigned char *out) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
    if (ctx == NULL) return 0;
    size_t len = 32;
    int ok = EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, peer) == 1
        && EVP_PKEY_derive(ctx, out, &len) == 1 && len == 32;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/* AES-256-CBC without padding over whole 16-byte blocks (len a multiple of 16), encrypting when
   encrypt is 1, decrypting when 0; out holds len bytes. Returns 1 on success. */
static inline int authctl_aes256cbc(const unsigned char *key, const unsigned char *iv, const unsigned char *in,
                                    size_t len, unsigned char *out, int encrypt) {
    if (len % 16 != 0) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int n = 0, ok = EVP_CipherInit_ex(ctx, EVP_aes_256_cbc(), NULL, key, iv, encrypt) == 1
        && EVP_CIPHER_CTX_set_padding(ctx, 0) == 1
        && (len == 0 || EVP_CipherUpdate(ctx, out, &n, in, (int)len) == 1)
        && EVP_CipherFinal_ex(ctx, out + n, &n) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}
#endif
