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

/* Function-like macros and compound constants Swift cannot import. */
static const char *const authctl_param_pub_key = OSSL_PKEY_PARAM_PUB_KEY;
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
#endif
