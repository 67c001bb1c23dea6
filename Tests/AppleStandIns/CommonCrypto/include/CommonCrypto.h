// A stand-in for Apple's CommonCrypto, for the TIDINGS_APPLE_STANDINS configuration only (see
// docs/ARCHITECTURE.md, "Platforms"): exactly the declarations Tidings' Apple branches use, as Apple's headers
// declare them (CommonKeyDerivation.h, CommonCryptoError.h), implemented over OpenSSL. Never in a library product.
#ifndef TIDINGS_STANDIN_COMMONCRYPTO_H
#define TIDINGS_STANDIN_COMMONCRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// https://developer.apple.com/documentation/commoncrypto/kccsuccess (CommonCryptoError.h)
enum {
    kCCSuccess = 0,
    kCCParamError = -4300,
};
/// https://developer.apple.com/documentation/commoncrypto/ccstatus
typedef int32_t CCStatus;

/// https://developer.apple.com/documentation/commoncrypto/kccpbkdf2 (CommonKeyDerivation.h)
enum {
    kCCPBKDF2 = 2,
};
/// https://developer.apple.com/documentation/commoncrypto/ccpbkdfalgorithm
typedef uint32_t CCPBKDFAlgorithm;

/// https://developer.apple.com/documentation/commoncrypto/kccprfhmacalgsha256 (CommonKeyDerivation.h)
enum {
    kCCPRFHmacAlgSHA1 = 1,
    kCCPRFHmacAlgSHA224 = 2,
    kCCPRFHmacAlgSHA256 = 3,
    kCCPRFHmacAlgSHA384 = 4,
    kCCPRFHmacAlgSHA512 = 5,
};
/// https://developer.apple.com/documentation/commoncrypto/ccpseudorandomalgorithm
typedef uint32_t CCPseudoRandomAlgorithm;

/// https://developer.apple.com/documentation/commoncrypto/1583409-cckeyderivationpbkdf
/// (iOS 5.0, macOS 10.7): kCCSuccess, or kCCParamError for an unknown algorithm or PRF, a null password or
/// derived key, no rounds, no output, or a null salt with a non-zero length.
int CCKeyDerivationPBKDF(CCPBKDFAlgorithm algorithm, const char *password, size_t passwordLen, const uint8_t *salt,
                         size_t saltLen, CCPseudoRandomAlgorithm prf, unsigned rounds, uint8_t *derivedKey,
                         size_t derivedKeyLen);

#endif
