#include "seedance/audit/signing.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "seedance/core/file_util.h"

namespace seedance::audit {
namespace {

EVP_PKEY* AsPkey(void* p) { return static_cast<EVP_PKEY*>(p); }

std::string Sha256Hex16(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), len)).substr(0, 16);
}

Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open key file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<std::string> RawPublicKey(EVP_PKEY* pkey) {
  std::size_t len = 0;
  if (EVP_PKEY_get_raw_public_key(pkey, nullptr, &len) != 1) {
    return InternalError("cannot read the Ed25519 public key");
  }
  std::string raw(len, '\0');
  if (EVP_PKEY_get_raw_public_key(pkey, reinterpret_cast<unsigned char*>(raw.data()), &len) != 1) {
    return InternalError("cannot read the Ed25519 public key");
  }
  return raw;
}

Result<std::string> BioToString(BIO* bio) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  if (len <= 0) return InternalError("PEM encoding failed");
  return std::string(data, static_cast<std::size_t>(len));
}

Status WriteSecretFile(const std::string& path, std::string_view content, bool secret) {
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(path, content));
  if (secret && ::chmod(path.c_str(), S_IRUSR | S_IWUSR) != 0) {
    return InternalError(path + ": cannot restrict permissions");
  }
  return Status::Ok();
}

}  // namespace

void SnapshotKey::PkeyDeleter::operator()(void* p) const { EVP_PKEY_free(AsPkey(p)); }
SnapshotKey::~SnapshotKey() = default;
SnapshotKey::SnapshotKey(SnapshotKey&&) noexcept = default;
SnapshotKey& SnapshotKey::operator=(SnapshotKey&&) noexcept = default;

std::string_view SignatureAlgorithmName(SignatureAlgorithm a) {
  return a == SignatureAlgorithm::kHmacSha256 ? "hmac-sha256" : "ed25519";
}

Result<SignatureAlgorithm> ParseSignatureAlgorithm(std::string_view name) {
  if (name == "hmac-sha256") return SignatureAlgorithm::kHmacSha256;
  if (name == "ed25519") return SignatureAlgorithm::kEd25519;
  return InvalidArgumentError("unknown signature algorithm '" + std::string(name) +
                              "' (known: hmac-sha256, ed25519)");
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(kDigits[u >> 4]);
    out.push_back(kDigits[u & 15]);
  }
  return out;
}

Result<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return InvalidArgumentError("odd number of hex digits");
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = val(hex[i]), lo = val(hex[i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgumentError("not lower-case hex");
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

Result<SnapshotKey> SnapshotKey::Hmac(std::string secret) {
  if (secret.size() < 16) {
    return InvalidArgumentError("HMAC key is " + std::to_string(secret.size()) +
                                " bytes; at least 16 are required");
  }
  SnapshotKey k;
  k.algorithm_ = SignatureAlgorithm::kHmacSha256;
  k.can_sign_ = true;
  k.key_id_ = Sha256Hex16(secret);
  k.secret_ = std::move(secret);
  return k;
}

Result<SnapshotKey> SnapshotKey::Ed25519FromSeed(std::string_view seed32) {
  if (seed32.size() != 32) return InvalidArgumentError("Ed25519 seed must be 32 bytes");
  EVP_PKEY* p = EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(seed32.data()), 32);
  if (p == nullptr) return InternalError("cannot build the Ed25519 key");
  return WrapEd25519(p, /*can_sign=*/true);
}

Result<SnapshotKey> SnapshotKey::WrapEd25519(void* pkey, bool can_sign) {
  SnapshotKey k;
  k.algorithm_ = SignatureAlgorithm::kEd25519;
  k.can_sign_ = can_sign;
  k.pkey_.reset(pkey);
  SEEDANCE_ASSIGN_OR_RETURN(std::string raw, RawPublicKey(AsPkey(pkey)));
  k.key_id_ = Sha256Hex16(raw);
  return k;
}

Result<SnapshotKey> SnapshotKey::LoadHmacKeyFile(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
  if (text.find("-----BEGIN") != std::string::npos) {
    return InvalidArgumentError(path + ": a PEM key, not an HMAC secret (use --pubkey for "
                                "Ed25519 public keys)");
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  auto k = Hmac(std::move(text));
  if (!k.has_value()) return InvalidArgumentError(path + ": " + k.error().message());
  return k;
}

Result<SnapshotKey> SnapshotKey::FromEd25519Pem(const std::string& text, const std::string& path,
                                               bool is_private) {
  BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
  EVP_PKEY* p = is_private ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr)
                           : PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (p == nullptr || EVP_PKEY_get_id(p) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(p);
    return InvalidArgumentError(path + (is_private ? ": not an Ed25519 private key"
                                                   : ": not a PEM Ed25519 public key"));
  }
  return WrapEd25519(p, is_private);
}

Result<SnapshotKey> SnapshotKey::LoadSigningKeyFile(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
  if (text.find("-----BEGIN PRIVATE KEY-----") == std::string::npos) return LoadHmacKeyFile(path);
  return FromEd25519Pem(text, path, /*is_private=*/true);
}

Result<SnapshotKey> SnapshotKey::LoadPublicKeyFile(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
  return FromEd25519Pem(text, path, /*is_private=*/false);
}

Result<std::string> SnapshotKey::Sign(std::string_view message) const {
  if (!can_sign_) return FailedPreconditionError("a public key cannot sign");
  if (algorithm_ == SignatureAlgorithm::kHmacSha256) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), md,
             &len) == nullptr) {
      return InternalError("HMAC failed");
    }
    return std::string(reinterpret_cast<const char*>(md), len);
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::string sig(64, '\0');
  std::size_t len = sig.size();
  const bool ok =
      EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, AsPkey(pkey_.get())) == 1 &&
      EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return InternalError("Ed25519 signing failed");
  sig.resize(len);
  return sig;
}

bool SnapshotKey::Verify(std::string_view message, std::string_view signature) const {
  if (algorithm_ == SignatureAlgorithm::kHmacSha256) {
    auto mac = Sign(message);
    return mac.has_value() && mac->size() == signature.size() &&
           CRYPTO_memcmp(mac->data(), signature.data(), signature.size()) == 0;
  }
  if (signature.size() != 64) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, AsPkey(pkey_.get())) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

Result<std::string> SnapshotKey::PublicKeyPem() const {
  if (algorithm_ != SignatureAlgorithm::kEd25519) return FailedPreconditionError("not Ed25519");
  BIO* bio = BIO_new(BIO_s_mem());
  Result<std::string> out = InternalError("PEM encoding failed");
  if (PEM_write_bio_PUBKEY(bio, AsPkey(pkey_.get())) == 1) out = BioToString(bio);
  BIO_free(bio);
  return out;
}

Result<std::string> SnapshotKey::PrivateKeyPem() const {
  if (algorithm_ != SignatureAlgorithm::kEd25519 || !can_sign_) {
    return FailedPreconditionError("not an Ed25519 private key");
  }
  BIO* bio = BIO_new(BIO_s_mem());
  Result<std::string> out = InternalError("PEM encoding failed");
  if (PEM_write_bio_PrivateKey(bio, AsPkey(pkey_.get()), nullptr, nullptr, 0, nullptr,
                               nullptr) == 1) {
    out = BioToString(bio);
  }
  BIO_free(bio);
  return out;
}

Status GenerateHmacKeyFile(const std::string& path) {
  std::string secret(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret.data()), 32) != 1) {
    return InternalError("no randomness for the key");
  }
  return WriteSecretFile(path, HexEncode(secret) + "\n", true);
}

Status GenerateEd25519KeyFiles(const std::string& private_path, const std::string& public_path) {
  std::string seed(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed.data()), 32) != 1) {
    return InternalError("no randomness for the key");
  }
  SEEDANCE_ASSIGN_OR_RETURN(SnapshotKey k, SnapshotKey::Ed25519FromSeed(seed));
  OPENSSL_cleanse(seed.data(), seed.size());
  SEEDANCE_ASSIGN_OR_RETURN(std::string priv, k.PrivateKeyPem());
  SEEDANCE_ASSIGN_OR_RETURN(std::string pub, k.PublicKeyPem());
  SEEDANCE_RETURN_IF_ERROR(WriteSecretFile(private_path, priv, true));
  return WriteSecretFile(public_path, pub, false);
}

}  // namespace seedance::audit
