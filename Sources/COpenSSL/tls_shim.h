// Inline wrappers over OpenSSL macros used by TidingsNet's TLS client.
#ifndef COPENSSL_TLS_SHIM_H
#define COPENSSL_TLS_SHIM_H
#include <openssl/ssl.h>

static inline long copenssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
#endif
