// CCKeyDerivationPBKDF over OpenSSL's PKCS5_PBKDF2_HMAC, with CommonCrypto's parameter checks
// (CommonCrypto's CommonKeyDerivation.c) so a bad call fails here as it would on Apple platforms.
#include "CommonCrypto.h"

#include <limits.h>
#include <openssl/evp.h>

int CCKeyDerivationPBKDF(CCPBKDFAlgorithm algorithm, const char *password, size_t passwordLen, const uint8_t *salt,
                         size_t saltLen, CCPseudoRandomAlgorithm prf, unsigned rounds, uint8_t *derivedKey,
                         size_t derivedKeyLen) {
    if (algorithm != kCCPBKDF2) return kCCParamError;
    const EVP_MD *digest;
    switch (prf) {
    case kCCPRFHmacAlgSHA1: digest = EVP_sha1(); break;
    case kCCPRFHmacAlgSHA224: digest = EVP_sha224(); break;
    case kCCPRFHmacAlgSHA256: digest = EVP_sha256(); break;
    case kCCPRFHmacAlgSHA384: digest = EVP_sha384(); break;
    case kCCPRFHmacAlgSHA512: digest = EVP_sha512(); break;
    default: return kCCParamError;
    }
    if (!password || !derivedKey || derivedKeyLen == 0 || rounds == 0) return kCCParamError;
    if (!salt && saltLen != 0) return kCCParamError;
    if (passwordLen > INT_MAX || saltLen > INT_MAX || derivedKeyLen > INT_MAX || rounds > INT_MAX) {
        return kCCParamError;
    }
    static const unsigned char empty[1] = {0};
    int status = PKCS5_PBKDF2_HMAC(password, (int)passwordLen, salt ? salt : empty, (int)saltLen, (int)rounds,
                                   digest, (int)derivedKeyLen, derivedKey);
    return status == 1 ? kCCSuccess : kCCParamError;
}
