// Random numbers as a pure function of (seed, stream, step, rank, element): Philox-4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the counter-based
// generator of TensorFlow's stateless ops and JAX. Freestanding, with no include and its own
// type names: the interpreter and src/ir include it, and the build embeds this very text
// into the prelude of generated code (kPhiloxText), so both backends compute the same bits
// from one source.
//
// An element's draw: key (k0, k1) = the seed's two halves mixed with the op's stream and the
// rank; counter = (element lo, element hi, step lo, step hi); one Philox block per element,
// whose words 0 and 1 give a uniform or a Box-Muller normal (words 2 and 3, then further
// blocks, redraw a truncated normal's draws beyond 2 standard deviations).
#ifndef KILN_PHILOX_H
#define KILN_PHILOX_H

namespace kiln_philox {

typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;

struct Block {
  u32 w[4];
};

inline Block philox4x32_10(u32 c0, u32 c1, u32 c2, u32 c3, u32 k0, u32 k1) {
  for (int round = 0; round < 10; ++round) {
    const u64 p0 = static_cast<u64>(0xD2511F53u) * c0, p1 = static_cast<u64>(0xCD9E8D57u) * c2;
    const u32 n0 = static_cast<u32>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<u32>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<u32>(p1);
    c3 = static_cast<u32>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Block{{c0, c1, c2, c3}};
}

// SplitMix64's finaliser: streams and ranks spread over the key's bits.
inline u64 mix(u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline Block block(u64 seed, u64 stream, u64 step, u64 rank, u64 element, u32 round) {
  const u64 key = seed ^ mix(stream * 0x100000001b3ull + rank * 0xff51afd7ed558ccdull + round);
  return philox4x32_10(static_cast<u32>(element), static_cast<u32>(element >> 32), static_cast<u32>(step),
                       static_cast<u32>(step >> 32), static_cast<u32>(key), static_cast<u32>(key >> 32));
}

// In [0, 1): the top 24 bits, exactly a float.
inline float unit(u32 w) { return static_cast<float>(w >> 8) * 5.9604644775390625e-8f; }
// In (0, 1]: for the logarithm.
inline float unit_open(u32 w) { return static_cast<float>((w >> 8) + 1u) * 5.9604644775390625e-8f; }

inline float box_muller(u32 a, u32 b) {
  const float r = __builtin_sqrtf(-2.0f * __builtin_logf(unit_open(a)));
  return r * __builtin_cosf(6.28318530717958647692f * unit(b));
}

inline float uniform(u64 seed, u64 stream, u64 step, u64 rank, u64 element) {
  return unit(block(seed, stream, step, rank, element, 0).w[0]);
}

inline float normal(u64 seed, u64 stream, u64 step, u64 rank, u64 element) {
  const Block b = block(seed, stream, step, rank, element, 0);
  return box_muller(b.w[0], b.w[1]);
}

// N(0, 1) cut at +-2 (TensorFlow's truncated_normal): up to 16 draws, then 0.
inline float truncated_normal(u64 seed, u64 stream, u64 step, u64 rank, u64 element) {
  for (u32 round = 0; round < 8; ++round) {
    const Block b = block(seed, stream, step, rank, element, round);
    const float z0 = box_muller(b.w[0], b.w[1]);
    if (z0 >= -2.0f && z0 <= 2.0f) return z0;
    const float z1 = box_muller(b.w[2], b.w[3]);
    if (z1 >= -2.0f && z1 <= 2.0f) return z1;
  }
  return 0.0f;
}

}  // namespace kiln_philox

#endif  // KILN_PHILOX_H
