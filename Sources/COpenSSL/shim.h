// OpenSSL 3 (Debian: libssl-dev). Linux only: Apple platforms use CryptoKit, Security and Network.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// Wrappers for function-like macros that Swift cannot import live in one file per user,
// so that the crypto facade and the TLS client never edit the same file.
#include "crypto_shim.h"
#include "tls_shim.h"

#endif
