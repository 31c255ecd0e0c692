#include "seedance/kube/packed_json.h"

#include <cstring>

namespace seedance::kube {
namespace {

using nlohmann::json;

// One tag byte per value. Strings shorter than 128 bytes carry their length in the tag
// (kShortString | length); other values have a tag below 0x80.
enum Tag : std::uint8_t {
  kNull = 0,
  kFalse = 1,
  kTrue = 2,
  kInt = 3,     // zigzag varint
  kUint = 4,    // varint
  kDouble = 5,  // 8 bytes, the value's bits
  kString = 6,  // varint length, bytes
  kArray = 7,   // varint count, values
  kObject = 8,  // varint count, then per member: key (varint index + 1, or 0 and an inline string), value
  kBinary = 9,  // subtype flag byte, varint subtype, varint length, bytes
  kShortString = 0x80,
};

void PutVarint(std::uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutString(std::string_view s, std::string& out) {
  if (s.size() < 0x80) {
    out.push_back(static_cast<char>(kShortString | s.size()));
  } else {
    out.push_back(static_cast<char>(kString));
    PutVarint(s.size(), out);
  }
  out.append(s);
}

// Reads `packed` from the front; every Get returns false past its end or on a malformed value.
class Reader {
 public:
  explicit Reader(std::string_view packed) : in_(packed) {}
  bool done() const { return in_.empty(); }
  bool Byte(std::uint8_t* b) {
    if (in_.empty()) return false;
    *b = static_cast<std::uint8_t>(in_.front());
    in_.remove_prefix(1);
    return true;
  }
  bool Varint(std::uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      std::uint8_t b = 0;
      if (!Byte(&b)) return false;
      *v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Bytes(std::size_t n, std::string_view* s) {
    if (n > in_.size()) return false;
    *s = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  // A string whose tag was read.
  bool StringAfter(std::uint8_t tag, std::string_view* s) {
    std::uint64_t n = tag & 0x7f;
    if (tag == kString && !Varint(&n)) return false;
    return Bytes(static_cast<std::size_t>(n), s);
  }

 private:
  std::string_view in_;
};

}  // namespace

void KeyTable::PackKey(const std::string& key, std::string& out) {
  auto it = index_.find(key);
  if (it == index_.end() && keys_.size() < kMaxKeys && key.size() <= kMaxKeyBytes) {
    it = index_.emplace(key, static_cast<std::uint32_t>(keys_.size())).first;
    keys_.push_back(key);
  }
  if (it != index_.end()) {
    PutVarint(std::uint64_t{it->second} + 1, out);
    return;
  }
  PutVarint(0, out);
  PutString(key, out);
}

void KeyTable::Pack(const json& v, std::string& out) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      out.push_back(static_cast<char>(kNull));
      return;
    case json::value_t::boolean:
      out.push_back(static_cast<char>(v.get<bool>() ? kTrue : kFalse));
      return;
    case json::value_t::number_integer: {
      const auto i = v.get<std::int64_t>();
      out.push_back(static_cast<char>(kInt));
      PutVarint((static_cast<std::uint64_t>(i) << 1) ^ static_cast<std::uint64_t>(i >> 63), out);
      return;
    }
    case json::value_t::number_unsigned:
      out.push_back(static_cast<char>(kUint));
      PutVarint(v.get<std::uint64_t>(), out);
      return;
    case json::value_t::number_float: {
      const double d = v.get<double>();
      char bits[sizeof d];
      std::memcpy(bits, &d, sizeof d);
      out.push_back(static_cast<char>(kDouble));
      out.append(bits, sizeof bits);
      return;
    }
    case json::value_t::string:
      PutString(v.get_ref<const std::string&>(), out);
      return;
    case json::value_t::array:
      out.push_back(static_cast<char>(kArray));
      PutVarint(v.size(), out);
      for (const auto& e : v) Pack(e, out);
      return;
    case json::value_t::object:
      out.push_back(static_cast<char>(kObject));
      PutVarint(v.size(), out);
      for (auto it = v.begin(); it != v.end(); ++it) {
        PackKey(it.key(), out);
        Pack(*it, out);
      }
      return;
    case json::value_t::binary: {
      const auto& b = v.get_binary();
      out.push_back(static_cast<char>(kBinary));
      out.push_back(static_cast<char>(b.has_subtype() ? 1 : 0));
      PutVarint(b.has_subtype() ? b.subtype() : 0, out);
      PutVarint(b.size(), out);
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
      return;
    }
  }
}

namespace {

bool UnpackValue(Reader& r, const std::vector<std::string>& keys, json* v) {
  std::uint8_t tag = 0;
  if (!r.Byte(&tag)) return false;
  std::uint64_t n = 0;
  std::string_view s;
  if ((tag & kShortString) != 0 || tag == kString) {
    if (!r.StringAfter(tag, &s)) return false;
    *v = std::string(s);
    return true;
  }
  switch (tag) {
    case kNull:
      *v = nullptr;
      return true;
    case kFalse:
    case kTrue:
      *v = tag == kTrue;
      return true;
    case kInt:
      if (!r.Varint(&n)) return false;
      *v = static_cast<std::int64_t>((n >> 1) ^ (~(n & 1) + 1));
      return true;
    case kUint:
      if (!r.Varint(&n)) return false;
      *v = n;
      return true;
    case kDouble: {
      double d = 0;
      if (!r.Bytes(sizeof d, &s)) return false;
      std::memcpy(&d, s.data(), sizeof d);
      *v = d;
      return true;
    }
    case kArray: {
      if (!r.Varint(&n)) return false;
      *v = json::array();
      for (std::uint64_t i = 0; i < n; ++i) {
        json e;
        if (!UnpackValue(r, keys, &e)) return false;
        v->push_back(std::move(e));
      }
      return true;
    }
    case kObject: {
      if (!r.Varint(&n)) return false;
      *v = json::object();
      for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t k = 0;
        if (!r.Varint(&k)) return false;
        std::string key;
        if (k == 0) {
          std::uint8_t t = 0;
          if (!r.Byte(&t) || ((t & kShortString) == 0 && t != kString) || !r.StringAfter(t, &s)) return false;
          key = std::string(s);
        } else if (k <= keys.size()) {
          key = keys[static_cast<std::size_t>(k - 1)];
        } else {
          return false;
        }
        json e;
        if (!UnpackValue(r, keys, &e)) return false;
        (*v)[std::move(key)] = std::move(e);
      }
      return true;
    }
    case kBinary: {
      std::uint8_t has = 0;
      std::uint64_t subtype = 0;
      if (!r.Byte(&has) || !r.Varint(&subtype) || !r.Varint(&n) || !r.Bytes(static_cast<std::size_t>(n), &s)) {
        return false;
      }
      std::vector<std::uint8_t> bytes(s.begin(), s.end());
      *v = has != 0 ? json::binary(std::move(bytes), static_cast<json::binary_t::subtype_type>(subtype))
                    : json::binary(std::move(bytes));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

Result<json> KeyTable::Unpack(std::string_view packed) const {
  Reader r(packed);
  json v;
  if (!UnpackValue(r, keys_, &v) || !r.done()) {
    return InternalError("packed JSON: malformed (" + std::to_string(packed.size()) + " bytes)");
  }
  return v;
}

}  // namespace seedance::kube
