/* zlib's CRC-32, the one Wren's journal lines carry: shared by the C modules that check those lines
 * (journal/_lines.c and search/_scan.c), each of which includes this header and calls crc_init() once
 * at import.
 *
 * Two ways to the same value:
 * - eight tables (slicing-by-8), anywhere;
 * - carry-less folding where the CPU has PCLMULQDQ (the method of Intel's "Fast CRC Computation for
 *   Generic Polynomials Using PCLMULQDQ"): 16-byte blocks are multiplied forward by x^k mod P and
 *   added into later blocks, so the CRC of the whole equals the CRC of the last block folded plus the
 *   bytes after it, which the tables finish. Bit-reflected: a block's first byte holds its highest
 *   powers. Each constant is x^e mod P, reflected into the top of 64 bits, e one less than the
 *   distance folded (the product of two reflected values comes out multiplied by x).
 *
 * tests/journal/test_native.py and tests/search/test_rawpass.py check both modules' CRC against
 * zlib's at every length and alignment around the block sizes. */
#ifndef WREN_CRC32_H
#define WREN_CRC32_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WREN_CRC_CLMUL 1
#include <emmintrin.h>
#include <wmmintrin.h>
#endif

static uint32_t crc_table[8][256];
static int crc_clmul = 0; /* set by crc_init when the CPU has PCLMULQDQ */

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = crc_table[0][i];
        for (int t = 1; t < 8; t++) {
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
            crc_table[t][i] = c;
        }
    }
#ifdef WREN_CRC_CLMUL
    __builtin_cpu_init();
    crc_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
#endif
}

/* The register's update over `n` bytes, without zlib's inversions before and after. */
static uint32_t crc_update(uint32_t c, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

#ifdef WREN_CRC_CLMUL
#define CRC_K575 0x653d982200000000ULL /* 4 blocks on: the first half of a block (x^(512+64-1)) */
#define CRC_K511 0xcad38e8f00000000ULL /* 4 blocks on: the second half (x^(512-1)) */
#define CRC_K191 0x65673b4600000000ULL /* 1 block on (x^(128+64-1)) */
#define CRC_K127 0x9ba54c6f00000000ULL /* 1 block on (x^(128-1)) */

__attribute__((target("pclmul,sse2"))) static inline __m128i crc_fold_by(__m128i x, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* The raw register after n >= 64 bytes, from register c. */
__attribute__((target("pclmul,sse2"))) static uint32_t crc_fold(uint32_t c, const unsigned char *p, size_t n) {
    const __m128i k4 = _mm_set_epi64x((long long)CRC_K511, (long long)CRC_K575);
    const __m128i k1 = _mm_set_epi64x((long long)CRC_K127, (long long)CRC_K191);
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)c));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    p += 64;
    n -= 64;
    while (n >= 64) {
        x0 = _mm_xor_si128(crc_fold_by(x0, k4), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(crc_fold_by(x1, k4), _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(crc_fold_by(x2, k4), _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(crc_fold_by(x3, k4), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        n -= 64;
    }
    __m128i x = _mm_xor_si128(crc_fold_by(x0, k1), x1);
    x = _mm_xor_si128(crc_fold_by(x, k1), x2);
    x = _mm_xor_si128(crc_fold_by(x, k1), x3);
    while (n >= 16) {
        x = _mm_xor_si128(crc_fold_by(x, k1), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)last, x);
    return crc_update(crc_update(0, last, 16), p, n);
}
#endif

/* zlib's CRC-32 of `n` bytes. */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
#ifdef WREN_CRC_CLMUL
    if (crc_clmul && n >= 64) return crc_fold(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
#endif
    return crc_update(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

#endif /* WREN_CRC32_H */
