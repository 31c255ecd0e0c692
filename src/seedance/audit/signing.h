#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "seedance/core/status.h"

namespace seedance::audit {

// Signature algorithms of a health snapshot (S7.4).
enum class SignatureAlgorithm : std::uint8_t { kHmacSha256, kEd25519 };
std::string_view SignatureAlgorithmName(SignatureAlgorithm a);  // "hmac-sha256", "ed25519"
// Errors: kInvalidArgument "unknown signature algorithm '...' (known: hmac-sha256, ed25519)".
Result<SignatureAlgorithm> ParseSignatureAlgorithm(std::string_view name);

// A key that signs (HMAC secret or Ed25519 private key) or verifies (HMAC secret or Ed25519
// public key), via OpenSSL 3. Move-only; thread-compatible.
class SnapshotKey {
 public:
  ~SnapshotKey();
  SnapshotKey(SnapshotKey&&) noexcept;
  SnapshotKey& operator=(SnapshotKey&&) noexcept;

  // An HMAC-SHA256 key: the secret bytes. REQUIRES nothing; errors: kInvalidArgument when the
  // secret is shorter than 16 bytes.
  static Result<SnapshotKey> Hmac(std::string secret);
  // An Ed25519 private key from its 32-byte seed.
  static Result<SnapshotKey> Ed25519FromSeed(std::string_view seed32);
  // Reads a signing key file: a PEM "PRIVATE KEY" (Ed25519) or else an HMAC secret (the file's
  // bytes without trailing whitespace). Errors: kNotFound (cannot read), kInvalidArgument.
  static Result<SnapshotKey> LoadSigningKeyFile(const std::string& path);
  // Reads an HMAC secret file (verification with --key).
  static Result<SnapshotKey> LoadHmacKeyFile(const std::string& path);
  // Reads a PEM "PUBLIC KEY" file holding an Ed25519 public key (verification with --pubkey).
  static Result<SnapshotKey> LoadPublicKeyFile(const std::string& path);

  SignatureAlgorithm algorithm() const { return algorithm_; }
  bool can_sign() const { return can_sign_; }
  // First 16 hex digits of SHA-256 over the HMAC secret or the raw Ed25519 public key: names the
  // key in a snapshot without revealing it.
  const std::string& key_id() const { return key_id_; }
  // Returns the signature bytes of `message`. REQUIRES: can_sign().
  Result<std::string> Sign(std::string_view message) const;
  // True if `signature` is a valid signature of `message` under this key (constant-time compare
  // for HMAC).
  bool Verify(std::string_view message, std::string_view signature) const;
  // Returns the PEM public key of an Ed25519 private key. REQUIRES: Ed25519.
  Result<std::string> PublicKeyPem() const;
  Result<std::string> PrivateKeyPem() const;

 private:
  SnapshotKey() = default;
  static Result<SnapshotKey> FromEd25519Pem(const std::string& text, const std::string& path,
                                            bool is_private);
  // Takes ownership of `pkey` (an EVP_PKEY* holding an Ed25519 key).
  static Result<SnapshotKey> WrapEd25519(void* pkey, bool can_sign);
  struct PkeyDeleter {
    void operator()(void* p) const;
  };
  SignatureAlgorithm algorithm_ = SignatureAlgorithm::kHmacSha256;
  bool can_sign_ = false;
  std::string secret_;                     // HMAC
  std::unique_ptr<void, PkeyDeleter> pkey_;  // EVP_PKEY* for Ed25519
  std::string key_id_;
};

// Writes a new random HMAC secret (64 hex characters) to `path` (mode 0600).
Status GenerateHmacKeyFile(const std::string& path);
// Writes a new Ed25519 key pair as PEM: private key to `private_path` (0600), public to
// `public_path`.
Status GenerateEd25519KeyFiles(const std::string& private_path, const std::string& public_path);

// Lower-case hex; strict decoding (lower-case only, even length). Errors: kInvalidArgument.
std::string HexEncode(std::string_view bytes);
Result<std::string> HexDecode(std::string_view hex);

}  // namespace seedance::audit
