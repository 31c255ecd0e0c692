#include "seedance/audit/snapshot.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "seedance/audit/synthetic.h"

namespace seedance::audit {
namespace {

constexpr std::int64_t kNow = 1'790'000'000;  // 2026-09-21

NodeAudit AuditOneNode() {
  Rng rng(5);
  SyntheticNode spec;
  spec.host = "gpu-node-7";
  spec.gpus = 2;
  std::vector<NodeTelemetry> fleet = {
      GenerateNodeTelemetry(spec, kNow - 6 * 3600, kNow, 300, rng)};
  auto audit = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_TRUE(audit.has_value());
  return audit->nodes.at(0);
}

SnapshotKey HmacKey(char fill = 'k') { return SnapshotKey::Hmac(std::string(32, fill)).value(); }
SnapshotKey EdKey(char fill = 's') { return SnapshotKey::Ed25519FromSeed(std::string(32, fill)).value();
}
SnapshotKey EdPublic(const SnapshotKey& priv, const std::string& dir) {
  const std::string path = dir + "/pub.pem";
  std::FILE* f = std::fopen(path.c_str(), "w");
  const std::string pem = *priv.PublicKeyPem();
  std::fwrite(pem.data(), 1, pem.size(), f);
  std::fclose(f);
  return SnapshotKey::LoadPublicKeyFile(path).value();
}

class SnapshotTamperTest : public ::testing::TestWithParam<SignatureAlgorithm> {
 protected:
  std::pair<SnapshotKey, SnapshotKey> Keys(char fill) {
    if (GetParam() == SignatureAlgorithm::kHmacSha256) return {HmacKey(fill), HmacKey(fill)};
    SnapshotKey priv = EdKey(fill);
    SnapshotKey pub = EdPublic(priv, ::testing::TempDir());
    return {std::move(priv), std::move(pub)};
  }
};

// S7.4: every single-byte change of a signed snapshot fails verification; a wrong key fails;
// the untouched file passes.
TEST_P(SnapshotTamperTest, EveryByteFlipFailsWrongKeyFailsUntouchedPasses) {
  auto [signer, verifier] = Keys('a');
  NodeAudit audit = AuditOneNode();
  NodeAdmission adm;
  adm.state = AdmissionState::kAdmitted;
  auto text = RenderSnapshot(audit, adm, kNow, &signer);
  ASSERT_TRUE(text.has_value()) << text.error().ToString();
  ASSERT_TRUE(VerifySnapshot(*text, verifier).ok()) << VerifySnapshot(*text, verifier).ToString();
  // Deterministic rendering.
  EXPECT_EQ(*RenderSnapshot(audit, adm, kNow, &signer), *text);
  ASSERT_GT(text->size(), 1000u);
  for (std::size_t i = 0; i < text->size(); ++i) {
    for (int mask : {0x01, 0x20, 0x80}) {
      std::string t = *text;
      t[i] = static_cast<char>(static_cast<unsigned char>(t[i]) ^ static_cast<unsigned>(mask));
      ASSERT_FALSE(VerifySnapshot(t, verifier).ok())
          << "byte " << i << " ^ " << mask << " ('" << (*text)[i] << "') still verifies";
    }
  }
  auto [other_signer, other_verifier] = Keys('b');
  const Status wrong = VerifySnapshot(*text, other_verifier);
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("signature.key_id"), std::string::npos) << wrong.message();
  // A file signed by the wrong key but claiming the right key id still fails on the signature.
  auto forged = RenderSnapshot(audit, adm, kNow, &other_signer);
  std::string f = *forged;
  const std::size_t at = f.find(other_signer.key_id());
  f.replace(at, signer.key_id().size(), signer.key_id());
  EXPECT_EQ(VerifySnapshot(f, verifier).message(), "signature does not match the content");
}

INSTANTIATE_TEST_SUITE_P(BothAlgorithms, SnapshotTamperTest,
                         ::testing::Values(SignatureAlgorithm::kHmacSha256,
                                           SignatureAlgorithm::kEd25519),
                         [](const auto& p) {
                           return p.param == SignatureAlgorithm::kHmacSha256 ? "hmac" : "ed25519";
                         });

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(SnapshotTest, MissingFieldAndUnknownAlgorithmAreNamed) {
  const SnapshotKey key = HmacKey();
  NodeAudit audit = AuditOneNode();
  const std::string text = *RenderSnapshot(audit, NodeAdmission{}, kNow, &key);
  EXPECT_EQ(VerifySnapshot(Replace(text, "\"xid_events\"", "\"xid_evenst\""), key).message(),
            "field 'metrics.xid_events' is missing");
  EXPECT_EQ(VerifySnapshot(Replace(text, "\"fingerprint\"", "\"fingerprinz\""), key).message(),
            "field 'fingerprint' is missing");
  const Status alg = VerifySnapshot(Replace(text, "hmac-sha256", "hmac-sha512"), key);
  EXPECT_EQ(alg.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(alg.message().find("field 'signature.algorithm': unknown signature algorithm "
                               "'hmac-sha512'"),
            std::string::npos)
      << alg.message();
  const std::string unsigned_text = *RenderSnapshot(audit, NodeAdmission{}, kNow, nullptr);
  EXPECT_NE(VerifySnapshot(unsigned_text, key).message().find("unsigned"), std::string::npos);
  EXPECT_NE(VerifySnapshot(text, EdKey()).message().find("signed with hmac-sha256"),
            std::string::npos);
}

TEST(SnapshotTest, RecordsFingerprintMetricsAndState) {
  const SnapshotKey key = HmacKey();
  NodeAudit audit = AuditOneNode();
  NodeAdmission adm;
  adm.state = AdmissionState::kObservation;
  const std::string text = *RenderSnapshot(audit, adm, kNow, &key);
  for (const char* s : {"\"GPU-gpu-node-7-0\"", "\"NVIDIA A100-SXM4-80GB\"", "\"A100-80G\"",
                        "\"550.54.15\"", "\"observation\"", "\"2026-09-21T", "\"energy_ratio_kw_per_tops\"",
                        "\"memory_use_ratio\""}) {
    EXPECT_NE(text.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(SnapshotFileName("node/7 a"), "health-snapshot-node_7_a.json");
}

// The snapshot says which grade criteria were missing and whether they capped the grade; a
// snapshot written before those fields existed still verifies.
TEST(SnapshotTest, GradeListsMissingCriteriaAndTheCap) {
  const SnapshotKey key = HmacKey();
  const NodeAudit capped = AuditOneNode();  // no schedule records
  const std::string text = *RenderSnapshot(capped, NodeAdmission{}, kNow, &key);
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["grade"]["name"], "good");
  EXPECT_EQ(j["grade"]["weight"], 1.0);
  EXPECT_EQ(j["grade"]["missing"], nlohmann::json::array({"scheduling_deviation_pct"}));
  EXPECT_EQ(j["grade"]["capped"], true);
  EXPECT_TRUE(j["metrics"]["scheduling_deviation_pct"].is_null());

  Rng rng(5);
  SyntheticNode spec;
  spec.host = "gpu-node-8";
  spec.gpus = 2;
  spec.schedule_deviation = 0.01;
  auto full = AuditFleet({GenerateNodeTelemetry(spec, kNow - 6 * 3600, kNow, 300, rng)},
                         AuditConfig{}, kNow);
  ASSERT_TRUE(full.has_value());
  const nlohmann::json f =
      nlohmann::json::parse(*RenderSnapshot(full->nodes.at(0), NodeAdmission{}, kNow, &key));
  EXPECT_EQ(f["grade"]["name"], "excellent");
  EXPECT_EQ(f["grade"]["weight"], 1.25);
  EXPECT_EQ(f["grade"]["missing"], nlohmann::json::array());
  EXPECT_EQ(f["grade"]["capped"], false);

  j["grade"].erase("missing");
  j["grade"].erase("capped");
  j["signature"].erase("value");
  j["signature"]["value"] = HexEncode(*key.Sign(j.dump()));
  EXPECT_TRUE(VerifySnapshot(j.dump(2) + "\n", key).ok());
}

TEST(SigningTest, HexIsStrict) {
  EXPECT_EQ(HexEncode("\x01\xab"), "01ab");
  EXPECT_FALSE(HexDecode("01AB").has_value());
  EXPECT_FALSE(HexDecode("0").has_value());
  EXPECT_EQ(*HexDecode("01ab"), std::string("\x01\xab"));
  EXPECT_FALSE(SnapshotKey::Hmac("short").has_value());
}

}  // namespace
}  // namespace seedance::audit
