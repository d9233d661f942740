// OpenSSL libcrypto: SHA-256 (EVP) and HMAC.
#ifndef UPLOADER_COPENSSL_SHIM_H
#define UPLOADER_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif
