// Rendezvous wire codec and crypto: frame round trips, random garbage never crashes the decoder,
// the length-prefix reader splits/joins reads and rejects oversize, and the OpenSSL-backed
// SHA-256/HMAC wrapper against known vectors, plus what the handshake proofs bind.
#include <gtest/gtest.h>

#include <random>

#include "ddplaunch/rendezvous/codec.h"
#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"

using namespace ddplaunch::rendezvous;

namespace {

Frame sample_frame() {
  Frame f;
  f.kind = "msg";
  f.job_id = "job=1\nwith\\odd";
  f.generation = Generation{18446744073709551615ull};
  f.subtype = "init_failed";
  f.fields = {{"a", ""}, {"key=with=eq", "v\\a\nl=ue"}, {"empty-next", "x\n"}, {"\\", "\\n"}};
  return f;
}

void expect_equal(const Frame& a, const Frame& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.subtype, b.subtype);
  EXPECT_EQ(a.fields, b.fields);
}

}  // namespace

TEST(RendezvousCodec, RoundTripThroughReaderInOneByteChunks) {
  Frame f = sample_frame();
  std::string wire = encode_frame(f) + encode_frame(f);
  FrameReader reader(1 << 20);
  int frames = 0;
  for (char c : wire) {
    reader.append(&c, 1);
    Frame out;
    std::string error;
    while (true) {
      auto st = reader.next(out, error);
      ASSERT_NE(st, FrameReader::Status::kError) << error;
      if (st == FrameReader::Status::kNeedMore) break;
      expect_equal(f, out);
      ++frames;
    }
  }
  EXPECT_EQ(frames, 2);
}

TEST(RendezvousCodec, AppendingABodyAddsExactlyItsEncodingToWhatIsThere) {
  const Frame f = sample_frame();
  std::string queue = "frames already queued";
  append_body(queue, f, "tail=1\n");
  EXPECT_EQ(queue, "frames already queued" + encode_body(f, "tail=1\n"));
  EXPECT_EQ(escape_text("a=b\\c\nd"), "a\\eb\\\\c\\nd");
}

TEST(RendezvousCodec, RawTailLinesDecodeAsFields) {
  Frame f;
  f.kind = "assign";
  std::string tail;
  append_field_line(tail, "n.0.host", "a=b");
  std::string error;
  auto out = decode_body(encode_body(f, tail), error);
  ASSERT_TRUE(out) << error;
  EXPECT_EQ(out->fields.at("n.0.host"), "a=b");
}

TEST(RendezvousCodec, MalformedBodiesAreErrorsNotCrashes) {
  std::string error;
  for (std::string bad : {"", "x", "kind\n", "k\nj\nnotanumber\ns\n", "k\nj\n1\ns\nnoequals\n",
                          "k\nj\n1\ns\na=1\na=2\n", "k\nj\n1\ns\n=v\n", "k\\q\nj\n1\ns\n",
                          "\nj\n1\ns\n", "k\nj\n99999999999999999999999\ns\n", "k\nj\n-1\ns\n",
                          "k\nj\n1\ns\na=b=c\n", "k\nj\n1\ns\na=b\\\n"}) {
    error.clear();
    EXPECT_FALSE(decode_body(bad, error)) << "accepted: " << bad;
    EXPECT_FALSE(error.empty());
  }
}

TEST(RendezvousCodec, RandomGarbageNeverCrashes) {
  std::mt19937 rng(12345);
  const std::string valid = encode_body(sample_frame());
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string body;
    if (round % 2) {  // pure random bytes
      std::size_t n = rng() % 64;
      for (std::size_t i = 0; i < n; ++i) body += static_cast<char>(rng() & 0xff);
    } else {  // a valid body with a few bytes flipped, inserted or deleted
      body = valid;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !body.empty(); ++e) {
        std::size_t at = rng() % body.size();
        switch (rng() % 3) {
          case 0: body[at] = "=\\\nxe0"[rng() % 7]; break;
          case 1: body.insert(at, 1, static_cast<char>(rng() & 0xff)); break;
          default: body.erase(at, 1);
        }
      }
    }
    std::string error;
    auto f = decode_body(body, error);
    if (f) {  // anything accepted must survive a re-encode/decode unchanged
      ++accepted;
      auto again = decode_body(encode_body(*f), error);
      ASSERT_TRUE(again) << error;
      expect_equal(*f, *again);
    } else {
      ++rejected;
      EXPECT_FALSE(error.empty());
    }
  }
  // Random bytes through the stream reader: it either needs more, yields frames, or fails once.
  for (int round = 0; round < 2000; ++round) {
    FrameReader reader(256);
    std::string bytes;
    for (int i = 0; i < 300; ++i) bytes += static_cast<char>(rng() & (round % 3 ? 0x07 : 0xff));
    reader.append(bytes.data(), bytes.size());
    Frame out;
    std::string error;
    for (int i = 0; i < 400; ++i)
      if (reader.next(out, error) != FrameReader::Status::kFrame) break;
  }
  EXPECT_GT(accepted, 0);  // both paths ran
  EXPECT_GT(rejected, 0);
}

TEST(RendezvousCodec, OversizeLengthPrefixFailsBeforeTheBodyArrives) {
  FrameReader reader(1000);
  const char prefix[4] = {0x00, 0x00, 0x03, static_cast<char>(0xe9)};  // 1001 bytes
  reader.append(prefix, 4);
  Frame out;
  std::string error;
  EXPECT_EQ(reader.next(out, error), FrameReader::Status::kError);
  EXPECT_NE(error.find("1001 bytes exceeds the limit of 1000"), std::string::npos) << error;
  EXPECT_EQ(reader.next(out, error), FrameReader::Status::kError);  // stays failed
}

TEST(RendezvousCrypto, Sha256FipsVectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55/56/64 bytes: the padding boundaries.
  EXPECT_EQ(to_hex(sha256(std::string(55, 'a'))), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(to_hex(sha256(std::string(56, 'a'))), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(to_hex(sha256(std::string(64, 'a'))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(RendezvousCrypto, HmacSha256Rfc4231Vectors) {
  EXPECT_EQ(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(to_hex(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  EXPECT_EQ(to_hex(hmac_sha256(std::string(131, '\xaa'),
                               "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(to_hex(hmac_sha256(std::string(131, '\xaa'),
                               "This is a test using a larger than block-size key and a larger than "
                               "block-size data. The key needs to be hashed before being used by the "
                               "HMAC algorithm.")),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(RendezvousCrypto, ProofsBindTokenBothNoncesClaimsAndDirection) {
  const std::string nm(64, 'a'), nn(64, 'b');
  auto p = node_proof("tok", nm, nn, "claims");
  EXPECT_EQ(p.size(), 64u);
  EXPECT_EQ(p, node_proof("tok", nm, nn, "claims"));
  EXPECT_EQ(p, to_hex(hmac_sha256("tok", "ddplaunch-join-v2\n" + nm + "\n" + nn + "\n" + to_hex(sha256("claims")))));
  EXPECT_NE(p, node_proof("tok2", nm, nn, "claims"));
  EXPECT_NE(p, node_proof("tok", std::string(64, 'c'), nn, "claims"));
  EXPECT_NE(p, node_proof("tok", nm, std::string(64, 'c'), "claims"));
  EXPECT_NE(p, node_proof("tok", nm, nn, "claimz"));
  EXPECT_NE(p, node_proof("tok", nn, nm, "claims"));  // the challenges' order matters
  // The master's proof over the same exchange is another value: a node's proof reflected back
  // by a relay never passes as the master's.
  EXPECT_NE(p, master_proof("tok", nn, nm, "claims"));
  EXPECT_NE(p, master_proof("tok", nm, nn, "claims"));
}

TEST(RendezvousCrypto, NoncesAreFreshHex) {
  auto a = random_nonce(), b = random_nonce();
  EXPECT_EQ(a.size(), kNonceHexChars);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

TEST(RendezvousCrypto, ConstantTimeCompare) {
  auto p = node_proof("tok", "n1", "n2", "c");
  EXPECT_TRUE(equal_constant_time(p, node_proof("tok", "n1", "n2", "c")));
  EXPECT_FALSE(equal_constant_time(p, p.substr(1)));
  EXPECT_FALSE(equal_constant_time(p, ""));
  std::string flipped = p;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  EXPECT_FALSE(equal_constant_time(p, flipped));
  EXPECT_TRUE(equal_constant_time("", ""));
}

// Peer text in logs: line breaks, ESC sequences and C1 controls become visible escapes; plain
// text and valid UTF-8 pass unchanged.
TEST(RendezvousCodec, PrintableEscapesControlCharactersFromPeers) {
  EXPECT_EQ(printable("node-1.example"), "node-1.example");
  EXPECT_EQ(printable("héllo ☃"), "héllo ☃");
  EXPECT_EQ(printable("job\n[00:00:00] [node 0] job succeeded"), "job\\n[00:00:00] [node 0] job succeeded");
  EXPECT_EQ(printable("a\rb\tc"), "a\\rb\\tc");
  EXPECT_EQ(printable("\x1b[2Jwiped"), "\\x1b[2Jwiped");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("csi\xc2\x9b" "31m"), "csi\\u009b31m");     // C1 CSI as UTF-8
  EXPECT_EQ(printable("raw\x9b" "31m"), "raw\\x9b31m");          // a lone C1 byte
  EXPECT_EQ(printable("cut\xe2\x98"), "cut\\xe2\\x98");          // truncated sequence
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");        // a UTF-16 surrogate
  EXPECT_EQ(printable("back\\slash"), "back\\slash");
}

// Whether text can be a JSON string as it is (the policy's state document saves other text as
// hex): control characters are valid UTF-8; broken, overlong and surrogate sequences are not.
TEST(RendezvousCodec, ValidUtf8RefusesOnlyBrokenSequences) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("h\xc3\xa9llo \xe2\x98\x83 \xf0\x9f\x98\x80\n\x1b[2J"));
  EXPECT_TRUE(valid_utf8(std::string("nul\0x", 5)));
  EXPECT_FALSE(valid_utf8("raw\x9b" "31m"));
  EXPECT_FALSE(valid_utf8("cut\xe2\x98"));
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));  // a UTF-16 surrogate
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));       // overlong '/'
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}
