// Inline wrappers over OpenSSL macros used by TidingsCore's crypto facade.
#ifndef COPENSSL_CRYPTO_SHIM_H
#define COPENSSL_CRYPTO_SHIM_H
#endif
