// Inline wrappers over OpenSSL macros used by TidingsNet's TLS client.
#ifndef COPENSSL_TLS_SHIM_H
#define COPENSSL_TLS_SHIM_H
#include <openssl/bio.h>
#include <openssl/ssl.h>

// The socket reactor of TidingsNet needs epoll, which Swift's Glibc module does not export. This
// Linux-only module is the one C entry point TidingsNet has, so the header is pulled in here.
#ifdef __linux__
#include <sys/epoll.h>
#endif

static inline long copenssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline long copenssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long copenssl_bio_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}

static inline long copenssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add1_chain_cert(ctx, cert);
}
// SSL_OP_NO_RENEGOTIATION is a 64-bit macro expression Swift cannot import.
static inline void copenssl_ctx_disable_renegotiation(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}

static inline int copenssl_renegotiation_disabled(const SSL *ssl) {
    return (SSL_get_options(ssl) & SSL_OP_NO_RENEGOTIATION) != 0;
}
#endif
