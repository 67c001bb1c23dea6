// Inline wrappers over OpenSSL macros used by TidingsCore's crypto facade.
// Swift cannot import function-like macros or macros built from other macros, so each one the
// facade needs is spelled out here once.
#ifndef COPENSSL_CRYPTO_SHIM_H
#define COPENSSL_CRYPTO_SHIM_H
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

// AES-GCM tag handling (EVP_CTRL_GCM_* alias EVP_CTRL_AEAD_*).
static inline int copenssl_gcm_get_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, length, tag);
}

static inline int copenssl_gcm_set_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, length, tag);
}

// Key selections for EVP_PKEY_fromdata.
static inline int copenssl_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int copenssl_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }

// Parameter names with static storage: OSSL_PARAM_BLD keeps the key pointer (not a copy) until
// OSSL_PARAM_BLD_to_param, which a Swift string bridged for one call would not outlive.
static inline const char *copenssl_param_group_name(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *copenssl_param_public_key(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
static inline const char *copenssl_param_private_key(void) { return OSSL_PKEY_PARAM_PRIV_KEY; }
static inline const char *copenssl_group_p256(void) { return SN_X9_62_prime256v1; }

// Memory BIO contents (BIO_get_mem_data is a macro over BIO_ctrl).
static inline long copenssl_bio_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

// Sets OpenSSL 3.2's implicit rejection for PKCS#1 v1.5 decryption (on by default there): with it, a
// block that is not valid padding decrypts to a deterministic synthetic message instead of an error,
// so nobody can use the library as a padding oracle. Libraries before 3.2 do not know the parameter;
// TidingsCore does the same rejection itself on them and never calls this.
static inline int copenssl_rsa_set_implicit_rejection(EVP_PKEY_CTX *ctx, unsigned int on) {
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_uint("implicit-rejection", &on);
    params[1] = OSSL_PARAM_construct_end();
    return EVP_PKEY_CTX_set_params(ctx, params);
}
#endif
